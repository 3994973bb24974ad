package benchflame

import (
	"errors"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// CreateOutputTemp creates the temporary file an output to dest is
// written through before it is renamed into place, in dir with a name
// made from pattern as os.CreateTemp makes one (its random part at most
// 10 digits). Its mode is what dest ends up with, as a shell's `>` would
// leave it: an existing regular file's permissions are kept, and a new
// file gets what os.Create gives one, 0666 less the umask. The umask is
// never read: the file is created with mode 0666 and the kernel takes the
// umask off (or applies the directory's default ACL) as it does for
// os.Create, atomically. os.CreateTemp's 0600 would make every result,
// profile and page private, and 0644 made a new file read-only to its
// group under umask 002, where `>` makes it group-writable.
func CreateOutputTemp(dir, pattern, dest string) (*os.File, error) {
	perm, keep := fs.FileMode(0o666), false
	if st, err := os.Stat(dest); err == nil && st.Mode().IsRegular() {
		perm, keep = st.Mode().Perm(), true
	}
	prefix, suffix, _ := strings.Cut(pattern, "*")
	for range 10000 {
		name := filepath.Join(dir, prefix+strconv.FormatUint(uint64(rand.Uint32()), 10)+suffix)
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, perm)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "createtemp", Path: filepath.Join(dir, pattern), Err: errors.Unwrap(err)}
		}
		if keep {
			// The umask applies to a new file's mode, not to the
			// permissions of the file it replaces.
			if err := f.Chmod(perm); err != nil {
				f.Close()
				os.Remove(name)
				return nil, err
			}
		}
		return f, nil
	}
	return nil, &os.PathError{Op: "createtemp", Path: filepath.Join(dir, pattern), Err: fs.ErrExist}
}
