//go:build linux

package guardtest

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"unsafe"
)

// TestSliceEndsAtTheGuard: every element of the slice can be written and
// read back, and a read one element past its end faults (run in a child
// process, which the fault stops).
func TestSliceEndsAtTheGuard(t *testing.T) {
	if os.Getenv("GUARDTEST_OVERRUN") == "1" {
		s := Slice[int64](t, 3)
		past := *(*int64)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(s)), 3*8)) // one past the end: the guard page
		t.Fatalf("read past the slice's end did not fault (read %d)", past)
	}
	for _, n := range []int{0, 1, 511, 512, 513, 5000} {
		s := Slice[int64](t, n)
		for i := range s {
			if s[i] != 0 {
				t.Fatalf("n=%d: element %d is %d, want 0", n, i, s[i])
			}
			s[i] = int64(i) + 1
		}
		for i := range s {
			if s[i] != int64(i)+1 {
				t.Fatalf("n=%d: element %d reads %d after writing %d", n, i, s[i], i+1)
			}
		}
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^TestSliceEndsAtTheGuard$")
	cmd.Env = append(os.Environ(), "GUARDTEST_OVERRUN=1")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "unexpected fault address") {
		t.Fatalf("a read past the end: err %v, output\n%s\nwant the fault", err, out)
	}
}
