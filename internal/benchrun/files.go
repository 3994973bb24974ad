package benchrun

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/tracebench/tracebench/internal/benchflame"
	"github.com/tracebench/tracebench/workloads/spec"
)

// pendingFile is an output written under a temporary name in its
// destination's directory and renamed into place by commit, so the
// destination holds either what it held before or everything written:
// never a truncated or half-written file. A destination that exists and
// is not a regular file (a device such as /dev/null, a pipe) is written
// directly, since there is nothing to replace.
type pendingFile struct {
	f    *os.File
	path string // the destination; a symbolic link is followed
	tmp  string // "" when writing the destination directly
	done bool
	// name is the destination as the user gave it, which the errors of
	// Write and commit name in place of the temporary file they met
	// (a message naming .c.pprof.tmp123, gone with the failure, named
	// no file the user knows); "" names the file written.
	name string
}

// createPending starts an output to path.
func createPending(path string) (p *pendingFile, err error) {
	given := path
	defer func() {
		if p != nil {
			p.name = given
		}
	}()
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	} else {
		// A file not yet written, in its directory as the kernel takes
		// it (dirlink/../r.txt is not ./r.txt), where the temporary file
		// goes.
		path = spec.Physical(path)
		if st, err := os.Lstat(path); err == nil && st.Mode()&os.ModeSymlink != 0 {
			// A link to a file not yet written writes that file, as
			// --out does, and stays a link.
			if t := target(path); t != "" {
				path = t
			}
		}
	}
	if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() && !st.IsDir() {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			return nil, err
		}
		return &pendingFile{f: f, path: path}, nil
	}
	// A file this process may not write (mode 0444, another user's
	// without write permission) is refused, as a shell's > and --out
	// refuse it: the rename would replace it all the same wherever the
	// directory may be written, deleting what it was kept read-only for.
	if st, err := os.Stat(path); err == nil && st.Mode().IsRegular() {
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return nil, err
		}
		f.Close()
		// Nor may one be that only its owner may replace.
		if err := mayReplace(path, st); err != nil {
			return nil, err
		}
	}
	// The temporary file has the mode the destination keeps or, new, the
	// umask gives it.
	f, err := benchflame.CreateOutputTemp(filepath.Dir(path), benchflame.TempPattern(path), path)
	if err != nil {
		return nil, err
	}
	return &pendingFile{f: f, path: path, tmp: f.Name()}, nil
}

// Write writes to the temporary file.
func (p *pendingFile) Write(b []byte) (int, error) {
	n, err := p.f.Write(b)
	return n, p.named(err)
}

// named returns err, an error of the file p writes (its temporary file, a
// write, a close or the rename), naming the destination as the user gave
// it in place of the file met.
func (p *pendingFile) named(err error) error {
	if err == nil || p.name == "" {
		return err
	}
	var pe *os.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &pe):
		return &os.PathError{Op: pe.Op, Path: p.name, Err: pe.Err}
	case errors.As(err, &le):
		return &os.PathError{Op: le.Op, Path: p.name, Err: le.Err}
	}
	return err
}

// commit closes the file and renames it into place. After a failure the
// destination is as it was and the temporary file is gone.
func (p *pendingFile) commit() error {
	if p.done {
		return nil
	}
	p.done = true
	err := p.f.Close()
	if p.tmp == "" {
		return p.named(err)
	}
	if err == nil {
		err = os.Rename(p.tmp, p.path)
	}
	if err != nil {
		os.Remove(p.tmp)
	}
	return p.named(err)
}

// discard closes and removes the temporary file unless it was committed:
// the destination stays as it was.
func (p *pendingFile) discard() {
	if p.done {
		return
	}
	p.done = true
	p.f.Close()
	if p.tmp != "" {
		os.Remove(p.tmp)
	}
}

// namedStep is named for a step of commitAll: an error that names no file
// of its own (a rename function's, say) is prefixed with the destination,
// so that the message names the file the user asked for, never the
// temporary or backup file the step met, which the rollback removes.
func (p *pendingFile) namedStep(err error) error {
	var pe *os.PathError
	var le *os.LinkError
	if errors.As(err, &pe) || errors.As(err, &le) {
		return p.named(err)
	}
	name := p.name
	if name == "" {
		name = p.path
	}
	return fmt.Errorf("%s: %w", spec.Path(name), err)
}

// commitAll closes every file and renames each into place with rename,
// all or nothing. A destination that exists is first kept under a backup
// name (a hard link where the file system has them, so the destination
// is never missing); if any step fails, every destination already
// replaced gets its old file back, one that did not exist is removed,
// and every temporary file is gone.
func commitAll(files []*pendingFile, rename func(oldpath, newpath string) error) error {
	for _, p := range files {
		if p.tmp == "" {
			return fmt.Errorf("%s is not a regular file", spec.Path(p.path))
		}
	}
	for _, p := range files {
		if err := p.f.Close(); err != nil {
			return p.namedStep(err)
		}
	}
	type step struct {
		p      *pendingFile
		backup string // "" when the destination did not exist
	}
	var done []step
	undo := func() {
		for i := len(done) - 1; i >= 0; i-- {
			if st := done[i]; st.backup != "" {
				os.Rename(st.backup, st.p.path)
			} else {
				os.Remove(st.p.path)
			}
		}
	}
	for _, p := range files {
		st := step{p: p}
		linked := false
		if _, err := os.Lstat(p.path); err == nil {
			st.backup = p.tmp + ".old"
			if err := os.Link(p.path, st.backup); err == nil {
				linked = true
			} else if err := os.Rename(p.path, st.backup); err != nil {
				undo()
				return p.namedStep(err)
			}
		}
		if err := rename(p.tmp, p.path); err != nil {
			// The destination is as it was: a link to it goes (renaming
			// it back onto the file it links to would do nothing and
			// leave it), a destination moved aside comes back.
			if linked {
				os.Remove(st.backup)
			} else if st.backup != "" {
				os.Rename(st.backup, p.path)
			}
			undo()
			return p.namedStep(err)
		}
		done = append(done, st)
	}
	for _, st := range done {
		if st.backup != "" {
			os.Remove(st.backup)
		}
	}
	for _, p := range files {
		p.done = true
	}
	return nil
}

// dashOut is the message for an output flag given "-": it names no
// standard output, as "-" names no standard input (docs/spec.md
// "Decoding is strict"), where many tools write to standard output. A
// file or directory named "-" would be made instead, which is seldom what
// was meant. why says why standard output is not the place, instead what
// to give.
func dashOut(why, instead string) string {
	return fmt.Sprintf(`"-" is no name of standard output (%s): %s`, why, instead)
}
