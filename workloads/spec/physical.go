package spec

import (
	"os"
	"path/filepath"
	"strings"
)

// Physical returns path as the kernel walks it, cleaned: a ".." that
// follows a symbolic link to a directory climbs from the link's target, where
// filepath.Clean (and Join, Dir and Abs, which clean) drops the link and
// the ".." together. With dirlink a link to /r/real/sub, "dirlink/../a.csv"
// names /r/real/a.csv, which Clean makes "a.csv", another file. A path
// without a ".." after another element (leading ones are kept by Clean,
// and the kernel takes them from the working directory alike) is only
// cleaned. Otherwise the longest prefix of path that exists is resolved
// (filepath.EvalSymlinks, which takes each ".." after the link before it)
// and the rest, which names nothing that exists yet, joined to it; a path
// of which no such prefix resolves is only cleaned.
func Physical(path string) string {
	if !innerDotDot(path) {
		return filepath.Clean(path)
	}
	sep := string(filepath.Separator)
	elems := strings.Split(path, sep)
	for i := len(elems); i > 0; i-- {
		pre := strings.Join(elems[:i], sep)
		if pre == "" {
			pre = sep // the root of an absolute path
		}
		if _, err := os.Lstat(pre); err != nil {
			continue
		}
		real, err := filepath.EvalSymlinks(pre)
		if err != nil {
			continue // a link to nothing at its end: a shorter prefix
		}
		return filepath.Join(append([]string{real}, elems[i:]...)...)
	}
	return filepath.Clean(path)
}

// PhysicalDir returns the directory of path as the kernel reaches it: the
// path up to its last separator, taken by Physical, so that the file at
// its end, a link of the user's own included, is not resolved. It is
// filepath.Dir(path) for a path without an inner "..".
func PhysicalDir(path string) string {
	i := strings.LastIndexByte(path, filepath.Separator)
	switch {
	case i < 0:
		return "."
	case i == 0:
		return string(filepath.Separator)
	}
	return Physical(path[:i])
}

// innerDotDot reports whether path has a ".." element after an element
// that is not "..".
func innerDotDot(path string) bool {
	seen := false // an element other than ".." (and other than empty or ".")
	for e := range strings.SplitSeq(path, string(filepath.Separator)) {
		switch e {
		case "", ".":
		case "..":
			if seen {
				return true
			}
		default:
			seen = true
		}
	}
	return false
}
