package spec

import (
	"os"
	"path/filepath"
	"testing"
)

// TestPhysical: a ".." after a link to a directory climbs from the link's
// target, as the kernel takes it; a path without an inner ".." is only
// cleaned (its leading ".." kept), and so is one no prefix of which
// exists; what does not exist yet after the resolved prefix is joined to
// it.
func TestPhysical(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "real", "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(root, "work"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "real", "sub"), filepath.Join(root, "work", "dirlink")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("nowhere", filepath.Join(root, "work", "dangling")); err != nil {
		t.Fatal(err)
	}
	t.Chdir(filepath.Join(root, "work"))
	realDir := filepath.Join(root, "real")
	for _, tc := range []struct{ in, want string }{
		{"dirlink/../a.csv", filepath.Join(realDir, "a.csv")},
		{"./dirlink/../new/b.csv", filepath.Join(realDir, "new", "b.csv")},
		{"dirlink/..", realDir},
		{"dirlink/../new/../c", filepath.Join(realDir, "c")},
		{root + "/work/dirlink/../a.csv", filepath.Join(realDir, "a.csv")}, // not built by Join, which cleans
		{"x/../a.csv", "a.csv"},                                            // x does not exist: cleaned
		{"../work/./a.csv", "../work/a.csv"},                               // no inner ..: cleaned, leading .. kept
		{"a//b/./c", "a/b/c"},
		{"dangling/../a.csv", "a.csv"}, // a link to nothing resolves nothing: the prefix before it
		{"/..", "/"},
	} {
		if got := Physical(tc.in); got != tc.want {
			t.Errorf("Physical(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	for _, tc := range []struct{ in, want string }{
		{"dirlink/../s.json", realDir},
		{"dirlink/s.json", "dirlink"},
		{"s.json", "."},
		{"/s.json", "/"},
		{"a/b/s.json", "a/b"},
	} {
		if got := PhysicalDir(tc.in); got != tc.want {
			t.Errorf("PhysicalDir(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
