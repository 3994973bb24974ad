package isnil

import (
	"io"
	"testing"
	"unsafe"
)

type thing struct{ n int }

func (*thing) Read([]byte) (int, error) { return 0, io.EOF }

type failure struct{}

func (*failure) Error() string { return "failure" }

type readers map[string]int

func (readers) Read([]byte) (int, error) { return 0, io.EOF }

type chunks []byte

func (chunks) Read([]byte) (int, error) { return 0, io.EOF }

type readFunc func([]byte) (int, error)

func (f readFunc) Read(p []byte) (int, error) { return f(p) }

type pipe chan []byte

func (pipe) Read([]byte) (int, error) { return 0, io.EOF }

type count int

func (count) Read([]byte) (int, error) { return 0, io.EOF }

type empty struct{}

func (empty) Read([]byte) (int, error) { return 0, io.EOF }

// Every kind that has a nil is told nil when it is, behind any and behind
// an interface of its own (a typed nil io.Reader is not == nil); every
// other value, and a non-nil one of each of those kinds, is not.
func TestValue(t *testing.T) {
	var (
		nilThing   *thing
		nilReaders readers
		nilChunks  chunks
		nilFunc    readFunc
		nilPipe    pipe
		nilReader  io.Reader
		nilErr     error
	)
	one := 1
	for _, tc := range []struct {
		name string
		x    any
		want bool
	}{
		{"nil interface", nil, true},
		{"nil io.Reader", nilReader, true},
		{"nil error", nilErr, true},
		{"typed nil pointer", nilThing, true},
		{"typed nil pointer behind io.Reader", io.Reader(nilThing), true},
		{"typed nil pointer behind error", error((*failure)(nil)), true},
		{"typed nil map", nilReaders, true},
		{"typed nil slice", nilChunks, true},
		{"typed nil func", nilFunc, true},
		{"typed nil chan", nilPipe, true},
		{"nil unsafe pointer", unsafe.Pointer(nil), true},
		{"nil *int", (*int)(nil), true},
		{"pointer", &thing{}, false},
		{"pointer behind io.Reader", io.Reader(&thing{n: 1}), false},
		{"map", readers{}, false},
		{"empty slice", chunks{}, false},
		{"func", readFunc(func([]byte) (int, error) { return 0, nil }), false},
		{"chan", make(pipe), false},
		{"unsafe pointer", unsafe.Pointer(&one), false},
		{"zero int", count(0), false},
		{"zero struct", empty{}, false},
		{"zero string", "", false},
		{"zero array", [2]*thing{}, false},
	} {
		if got := Value(tc.x); got != tc.want {
			t.Errorf("%s: Value(%#v) = %v, want %v", tc.name, tc.x, got, tc.want)
		}
	}
}
