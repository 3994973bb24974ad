package benchrun

import (
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// devTTY is the device number of /dev/tty, which names the controlling
// terminal of the process that opens it.
var devTTY = unix.Mkdev(5, 0)

// deviceOf returns the device a character device file stands for
// (charDevice), and false for any other file.
func deviceOf(st os.FileInfo) (uint64, bool) {
	if st.Mode()&os.ModeCharDevice == 0 {
		return 0, false
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return charDevice(sys.Rdev)
}

// charDevice returns the device a character device file stands for: its
// own device number, or, for /dev/tty, the process's controlling
// terminal's (/dev/pts/3), and false when there is none.
func charDevice(rdev uint64) (uint64, bool) {
	if rdev != devTTY {
		return rdev, true
	}
	// tty_nr is the seventh field of /proc/self/stat, the fifth after
	// the command name, which may hold spaces and parentheses: fields
	// count from the last ")".
	data, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return 0, false
	}
	s := string(data)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 5 {
		return 0, false
	}
	nr, err := strconv.ParseUint(f[4], 10, 32)
	if err != nil || nr == 0 {
		return 0, false
	}
	// tty_nr packs the major in bits 8-15 and the minor in bits 0-7 and
	// 20-31 (proc(5)).
	major := uint32(nr>>8) & 0xfff
	minor := uint32(nr&0xff) | uint32(nr>>12)&0xfff00
	return unix.Mkdev(major, minor), true
}
