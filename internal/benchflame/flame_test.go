package benchflame

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime/pprof"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"
)

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" && os.Getenv(interruptChildEnv) == "1" {
		interruptSelf()
	}
	RunChildIfRequested()
	os.Exit(m.Run())
}

// interruptChildEnv makes the export subprocess of a test end itself
// with SIGINT, as Ctrl-C in a terminal does.
const interruptChildEnv = "BENCHFLAME_TEST_INTERRUPT_CHILD"

// interruptSelf sends SIGINT to this process and waits for it to end.
func interruptSelf() {
	p, err := os.FindProcess(os.Getpid())
	if err == nil {
		err = p.Signal(os.Interrupt)
	}
	if err != nil {
		panic(err)
	}
	time.Sleep(time.Minute)
	panic("SIGINT did not end the process")
}

// TestWriteInterrupted checks that an export whose subprocess gets
// SIGINT (Ctrl-C reaches every process of the foreground group), or
// whose context is cancelled, returns ErrInterrupted and leaves the
// destination as it was.
func TestWriteInterrupted(t *testing.T) {
	// A command using Write takes SIGINT itself (signal.NotifyContext, as
	// benchrun's main does), so its export subprocess starts with SIGINT's
	// default action. This test binary takes it too while the test runs:
	// started with SIGINT ignored (a shell's background job without job
	// control, which scripts/mutants.sh then runs directly), it would pass
	// the ignoring on to the subprocess, which would outlive its SIGINT.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt)
	defer signal.Stop(sigs)
	dir := t.TempDir()
	path := filepath.Join(dir, "flame.html")
	if err := os.WriteFile(path, []byte("old page\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv(interruptChildEnv, "1")
	err := WriteFile(context.Background(), path, Options{Profile: "testdata/imported.pprof"})
	if !errors.Is(err, ErrInterrupted) || err.Error() != "benchflame: interrupted" {
		t.Errorf("export whose subprocess got SIGINT: %v, want ErrInterrupted", err)
	}
	t.Setenv(interruptChildEnv, "")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var buf bytes.Buffer
	if err := Write(ctx, &buf, Options{Profile: "testdata/imported.pprof"}); !errors.Is(err, ErrInterrupted) || buf.Len() != 0 {
		t.Errorf("export with a cancelled context: %v, %d bytes written; want ErrInterrupted and nothing", err, buf.Len())
	}
	if data, _ := os.ReadFile(path); string(data) != "old page\n" {
		t.Errorf("flame.html changed to %.40q", data)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("%d files left in the directory, want flame.html only", len(entries))
	}
}

// TestWriteFileReplacesWhole checks that WriteFile replaces an existing
// file through a temporary file, following a symbolic link, and that a
// failed write leaves neither a partial page nor a temporary file.
func TestWriteFileReplacesWhole(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "flame.html")
	if err := os.WriteFile(path, []byte("old page\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("flame.html", filepath.Join(dir, "link.html")); err != nil {
		t.Fatal(err)
	}
	// A hard link keeps the old file: the page is a new file renamed into
	// place, never the old one rewritten, which a failure part-way would
	// leave half-written.
	if err := os.Link(path, filepath.Join(dir, "old.html")); err != nil {
		t.Fatal(err)
	}
	page := bytes.Repeat([]byte("<p>x</p>\n"), 1000)
	if err := writeFileAtomic(filepath.Join(dir, "link.html"), page); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(path); !bytes.Equal(data, page) {
		t.Errorf("flame.html holds %d bytes, want the %d of the page", len(data), len(page))
	}
	if st, err := os.Lstat(filepath.Join(dir, "link.html")); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v", err)
	}
	// The page keeps the mode of the file it replaces, whatever the umask.
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Errorf("flame.html has mode %v, want the old file's 0600", st.Mode().Perm())
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "old.html")); string(data) != "old page\n" {
		t.Errorf("the old file was rewritten in place: it holds %.40q", data)
	}
	// An error names the destination, not the temporary file.
	missing := filepath.Join(dir, "no", "flame.html")
	if err := writeFileAtomic(missing, page); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("write into a missing directory: %v, want an error naming %s", err, missing)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 3 {
		t.Errorf("%d entries left, want flame.html, link.html and old.html", len(entries))
	}
}

// A page whose own name the file system takes (up to 255 bytes) is
// written, though the temporary name beside it adds a dot, ".tmp" and ten
// digits: TempPattern keeps at most maxTempBase bytes of the name, cut at
// a character's start (a multi-byte name is cut whole characters).
func TestLongPageNamesAreWritten(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{
		strings.Repeat("f", 250) + ".html",
		strings.Repeat("é", 125) + ".html", // 255 bytes
	} {
		path := filepath.Join(dir, name)
		if err := writeFileAtomic(path, []byte("<p>page</p>\n")); err != nil {
			t.Fatalf("a %d-byte name: %v", len(name), err)
		}
		if data, err := os.ReadFile(path); err != nil || string(data) != "<p>page</p>\n" {
			t.Fatalf("a %d-byte name: %q, %v", len(name), data, err)
		}
		p := TempPattern(path)
		if !utf8.ValidString(p) || len(p) > 1+maxTempBase+len(".tmp*") || !strings.HasPrefix(p, "."+name[:10]) {
			t.Errorf("TempPattern(%d bytes) = %q (%d bytes)", len(name), p, len(p))
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("%d entries left, want the 2 pages", len(entries))
	}
}

// stacks returns the JSON the page hands to pprof's stack viewer.
func stacks(t *testing.T, page []byte) string {
	t.Helper()
	m := regexp.MustCompile(`stackViewer\((\{.*\}), `).FindSubmatch(page)
	if m == nil {
		t.Fatalf("page has no stackViewer({...}) call; it starts %.300q", page)
	}
	return string(m[1])
}

func TestWriteDrawsLabelsAsRootFrames(t *testing.T) {
	var buf bytes.Buffer
	err := Write(context.Background(), &buf, Options{Profile: "testdata/imported.pprof", Labels: []string{"runtime", "operator"}})
	if err != nil {
		t.Fatal(err)
	}
	s := stacks(t, buf.Bytes())
	// A label frame is named by the label's value, in the label key's
	// "file".
	for _, want := range []string{`{"FullName":"interactive","FileName":"runtime"`, `{"FullName":"maintenance","FileName":"runtime"`} {
		if !bytes.Contains([]byte(s), []byte(want)) {
			t.Errorf("flame graph has no %s root frame", want)
		}
	}
	// Without labels there is no label frame.
	buf.Reset()
	if err := Write(context.Background(), &buf, Options{Profile: "testdata/imported.pprof"}); err != nil {
		t.Fatal(err)
	}
	if s := stacks(t, buf.Bytes()); bytes.Contains([]byte(s), []byte(`"FileName":"runtime"`)) {
		t.Errorf("flame graph without Labels has a runtime label frame")
	}
}

func TestWriteSelfContained(t *testing.T) {
	var buf bytes.Buffer
	if err := Write(context.Background(), &buf, Options{Profile: "testdata/imported.pprof"}); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{`<script src=`, `<link `, `@import`, `src="http`} {
		if bytes.Contains(buf.Bytes(), []byte(bad)) {
			t.Errorf("page contains %q: it must load nothing", bad)
		}
	}
}

func TestWriteDiffBase(t *testing.T) {
	var diff, plain bytes.Buffer
	opts := Options{Profile: "testdata/imported.pprof", Base: "testdata/direct.pprof", Labels: []string{"runtime"}}
	if err := Write(context.Background(), &diff, opts); err != nil {
		t.Fatal(err)
	}
	opts.Base = ""
	if err := Write(context.Background(), &plain, opts); err != nil {
		t.Fatal(err)
	}
	// The direct run's Solo runtime only appears in the difference, with
	// its samples counted against the imported run.
	if d, p := stacks(t, diff.Bytes()), stacks(t, plain.Bytes()); d == p {
		t.Fatal("the diff_base graph equals the plain graph: Base was ignored")
	}
	if !bytes.Contains(diff.Bytes(), []byte(`{"FullName":"solo","FileName":"runtime"`)) {
		t.Errorf("diff graph has no runtime:solo frame from the base profile")
	}
	// The page says it is a difference, and of which profiles: pprof's own
	// title and details name the other profile's binary and time alone.
	what := "testdata/imported.pprof minus base testdata/direct.pprof"
	for _, want := range []string{"<title>" + what + "</title>", `id="details">` + what + "</a>", "<div>Difference: " + what} {
		if !bytes.Contains(diff.Bytes(), []byte(want)) {
			t.Errorf("diff graph does not contain %q", want)
		}
	}
	if bytes.Contains(plain.Bytes(), []byte("minus base")) {
		t.Error("plain graph calls itself a difference")
	}
}

// TestWriteRepeatedAndConcurrent is F1: exports in one process, one after
// the other and at once, give the same page for the same options, whatever
// ran before.
func TestWriteRepeatedAndConcurrent(t *testing.T) {
	labeled := Options{Profile: "testdata/imported.pprof", Labels: []string{"runtime"}}
	diff := Options{Profile: "testdata/imported.pprof", Base: "testdata/direct.pprof"}
	var first bytes.Buffer
	if err := Write(context.Background(), &first, labeled); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	out := make([]bytes.Buffer, 4)
	errs := make([]error, 4)
	for i := range out {
		wg.Add(1)
		go func() {
			defer wg.Done()
			o := labeled
			if i%2 == 1 {
				o = diff
			}
			errs[i] = Write(context.Background(), &out[i], o)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("export %d: %v", i, err)
		}
	}
	if stacks(t, out[0].Bytes()) != stacks(t, first.Bytes()) || stacks(t, out[2].Bytes()) != stacks(t, first.Bytes()) {
		t.Error("the same labeled export gave different stacks after other exports")
	}
	if stacks(t, out[1].Bytes()) != stacks(t, out[3].Bytes()) {
		t.Error("two concurrent diff exports differ")
	}
}

func TestWriteBadProfile(t *testing.T) {
	dir := t.TempDir()
	junk := filepath.Join(dir, "junk.pprof")
	if err := os.WriteFile(junk, []byte("not a profile\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, o := range []Options{
		{Profile: junk},
		{Profile: filepath.Join(dir, "missing.pprof")},
		{Profile: "testdata/imported.pprof", Base: filepath.Join(dir, "missing.pprof")},
		{},
		{Profile: "testdata/imported.pprof", Labels: []string{"a,b"}},
		{Profile: "testdata/imported.pprof", Labels: []string{"a\tb"}},
		{Profile: "testdata/imported.pprof", Labels: []string{"runtime", ""}},
		{Profile: "testdata/imported.pprof", Labels: []string{"runtime", "operator", "runtime"}},
	} {
		var buf bytes.Buffer
		err := Write(context.Background(), &buf, o)
		if !errors.Is(err, ErrProfile) {
			t.Errorf("Write(%+v) = %v, want ErrProfile", o, err)
		}
		if buf.Len() != 0 {
			t.Errorf("Write(%+v) wrote %d bytes on error", o, buf.Len())
		}
	}
	// F3: no file is left behind by a failed export.
	out := filepath.Join(dir, "out.html")
	if err := WriteFile(context.Background(), out, Options{Profile: junk}); err == nil {
		t.Fatal("WriteFile of a junk profile succeeded")
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("failed WriteFile left %s (stat: %v)", out, err)
	}
	if err := WriteFile(context.Background(), out, Options{Profile: "testdata/direct.pprof"}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(out); !bytes.Contains(b, []byte("stackViewer(")) {
		t.Error("WriteFile wrote no flame graph")
	}
}

func TestWriteProfileFromBytes(t *testing.T) {
	b, err := os.ReadFile("testdata/imported.pprof")
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{Labels: []string{"runtime"}}
	var fromBytes, fromFile bytes.Buffer
	if err := WriteProfile(context.Background(), &fromBytes, b, opts); err != nil {
		t.Fatal(err)
	}
	opts.Profile = "testdata/imported.pprof"
	if err := Write(context.Background(), &fromFile, opts); err != nil {
		t.Fatal(err)
	}
	if stacks(t, fromBytes.Bytes()) != stacks(t, fromFile.Bytes()) {
		t.Error("the flame graph of the profile's bytes differs from that of its file")
	}
	if err := WriteProfile(context.Background(), &bytes.Buffer{}, []byte("junk"), Options{}); !errors.Is(err, ErrProfile) {
		t.Errorf("WriteProfile(junk) = %v, want ErrProfile", err)
	}
}

// TestWriteBadBaseNamesIt checks that a bad Base is named in the error,
// not only Profile (the driver's own message begins with Profile whichever
// file is at fault), and that a Base of another kind of profile (a heap
// profile against a CPU one) names both.
func TestWriteBadBaseNamesIt(t *testing.T) {
	dir := t.TempDir()
	cut := filepath.Join(dir, "cut-base.pprof")
	whole, err := os.ReadFile("testdata/direct.pprof")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cut, whole[:len(whole)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	heap := filepath.Join(dir, "heap-base.pprof")
	var hb bytes.Buffer
	if err := pprof.Lookup("allocs").WriteTo(&hb, 0); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(heap, hb.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		base string
		want *regexp.Regexp
	}{
		{cut, regexp.MustCompile(`^benchflame: bad profile: ` + regexp.QuoteMeta(cut) + `: `)},
		{heap, regexp.MustCompile(`testdata/imported\.pprof .* base ` + regexp.QuoteMeta(heap) + ` .*share no sample type`)},
	} {
		var buf bytes.Buffer
		err := Write(context.Background(), &buf, Options{Profile: "testdata/imported.pprof", Base: tc.base})
		if !errors.Is(err, ErrProfile) || !tc.want.MatchString(err.Error()) {
			t.Errorf("base %s: error %v, want ErrProfile matching %s", tc.base, err, tc.want)
		}
		if buf.Len() != 0 {
			t.Errorf("base %s: wrote %d bytes on error", tc.base, buf.Len())
		}
	}
}

// TestWriteNamesTheBadProfileAsGiven checks that a message of the export
// names each profile as the caller gave it. The subprocess gets the file a
// link leads to; its message used to be edited back by replacing that
// path wherever it appeared, so with --base base.pprof, a link to
// cpu.pprof, a bad cpu.pprof.old was named base.pprof.old, a file that
// does not exist.
func TestWriteNamesTheBadProfileAsGiven(t *testing.T) {
	dir := t.TempDir()
	whole, err := os.ReadFile("testdata/direct.pprof")
	if err != nil {
		t.Fatal(err)
	}
	good := filepath.Join(dir, "cpu.pprof")
	bad := good + ".old"
	link := filepath.Join(dir, "base.pprof")
	if err := os.WriteFile(good, whole, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte("not a profile\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(good, link); err != nil {
		t.Fatal(err)
	}
	badLink := filepath.Join(dir, "bad-link.pprof")
	if err := os.Symlink(bad, badLink); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		opts Options
		want string
	}{
		{Options{Profile: bad, Base: link}, "benchflame: bad profile: " + bad + ": parsing profile"},
		{Options{Profile: link, Base: bad}, "benchflame: bad profile: " + bad + ": parsing profile"},
		// The link itself is still named as given, not as the file it
		// leads to.
		{Options{Profile: good, Base: badLink}, "benchflame: bad profile: " + badLink + ": parsing profile"},
	} {
		var buf bytes.Buffer
		err := Write(context.Background(), &buf, tc.opts)
		if !errors.Is(err, ErrProfile) || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("Write(%+v) = %v, want ErrProfile starting %q", tc.opts, err, tc.want)
		}
		if buf.Len() != 0 {
			t.Errorf("Write(%+v) wrote %d bytes on error", tc.opts, buf.Len())
		}
	}
}

// TestWriteSaysAResultFileIsNoProfile: a Go benchmark result file given
// as a profile (the likeliest mix-up: benchrun writes both) is named with
// a note that it reads as benchmark results; a file that does not read so
// gets no note.
func TestWriteSaysAResultFileIsNoProfile(t *testing.T) {
	dir := t.TempDir()
	const note = " (it reads as Go benchmark results, not a pprof profile)"
	for _, tc := range []struct {
		name, text string
		noted      bool
	}{
		{"results.txt", "goos: linux\ngoarch: amd64\nBenchmarkX-2 \t10\t100 ns/op\n", true},
		{"bare.txt", "\n# a comment\nBenchmarkX 10 100 ns/op\n", true},
		// As benchrun writes them: Unit lines first.
		{"benchrun.txt", "Unit install-ns better=lower\nUnit rows assume=exact\ngoos: linux\nBenchmarkX 1 5 install-ns\n", true},
		{"config.txt", "cpu: Intel(R) Xeon(R)\n", true},
		{"junk.pprof", "not a profile\n", false},
		{"colon.txt", "Note: a result file it is not\n", false},
		{"url.txt", "http://example.com/cpu.pprof\n", false},
		{"empty.pprof", "", false},
	} {
		path := filepath.Join(dir, tc.name)
		if err := os.WriteFile(path, []byte(tc.text), 0o644); err != nil {
			t.Fatal(err)
		}
		err := Write(context.Background(), io.Discard, Options{Profile: path})
		if !errors.Is(err, ErrProfile) || !strings.HasPrefix(err.Error(), "benchflame: bad profile: "+path+": ") {
			t.Errorf("%s: err = %v, want ErrProfile naming it", tc.name, err)
			continue
		}
		if got := strings.HasSuffix(err.Error(), note); got != tc.noted {
			t.Errorf("%s: err = %v, noted as results %v, want %v", tc.name, err, got, tc.noted)
		}
	}
}

// TestWriteDiffNamesALinkAndItsFile checks that a difference of a profile
// with a link to it names each as given: resolved for the subprocess,
// both are one path, and a name kept by path named both after the link.
func TestWriteDiffNamesALinkAndItsFile(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(dir, "base.pprof")
	// The file as the link resolves to it: the profile's path is then
	// the link's once resolved.
	file, err := filepath.EvalSymlinks("testdata/direct.pprof")
	if err == nil {
		file, err = filepath.Abs(file)
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(file, link); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := Write(context.Background(), &buf, Options{Profile: file, Base: link}); err != nil {
		t.Fatal(err)
	}
	if want := "<title>" + file + " minus base " + link + "</title>"; !bytes.Contains(buf.Bytes(), []byte(want)) {
		t.Errorf("diff graph does not contain %q", want)
	}
}

// TestWriteRefusesAPipe checks that a profile or base that is a named pipe
// is refused at once, naming it: the export reads each profile twice (its
// own parse, then pprof's driver), so the second read of a pipe waited for
// a writer forever.
func TestWriteRefusesAPipe(t *testing.T) {
	p := filepath.Join(t.TempDir(), "cpu.pprof")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}
	for _, o := range []Options{{Profile: p}, {Profile: "testdata/imported.pprof", Base: p}} {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		var buf bytes.Buffer
		err := Write(ctx, &buf, o)
		cancel()
		if !errors.Is(err, ErrProfile) || !strings.Contains(err.Error(), p+": not a regular file") {
			t.Errorf("Write(%+v) = %v, want ErrProfile naming %s as not a regular file", o, err, p)
		}
	}
}

// TestWriteThroughOwnDescriptors: a profile named through this process's
// own descriptors (--base /dev/stdin < direct.pprof, /dev/fd/N) is drawn
// from its file, as the same file named by its path is. The export's
// subprocess opened the name itself, where it is the subprocess's own
// descriptor (its standard input, the options' pipe), and refused it as
// not a regular file. A bad profile is still named as given.
func TestWriteThroughOwnDescriptors(t *testing.T) {
	open := func(path string) string {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return fmt.Sprintf("/proc/self/fd/%d", f.Fd())
	}
	base := open("testdata/direct.pprof")
	if _, err := os.Stat(base); err != nil {
		t.Skipf("no /proc/self/fd here: %v", err)
	}
	var want, got bytes.Buffer
	if err := Write(context.Background(), &want, Options{Profile: "testdata/imported.pprof", Base: "testdata/direct.pprof"}); err != nil {
		t.Fatal(err)
	}
	if err := Write(context.Background(), &got, Options{Profile: "testdata/imported.pprof", Base: base}); err != nil {
		t.Fatalf("Write with Base %s: %v", base, err)
	}
	if stacks(t, got.Bytes()) != stacks(t, want.Bytes()) {
		t.Errorf("Base %s drew another graph than testdata/direct.pprof", base)
	}
	junk := filepath.Join(t.TempDir(), "junk.pprof")
	if err := os.WriteFile(junk, []byte("not a profile\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := open(junk)
	err := Write(context.Background(), io.Discard, Options{Profile: bad})
	if !errors.Is(err, ErrProfile) || !strings.Contains(err.Error(), bad+": ") || strings.Contains(err.Error(), junk) {
		t.Errorf("Write of a junk profile as %s = %v, want ErrProfile naming %s", bad, err, bad)
	}
}

// TestLabelKeyOK: a key drawn as root frames is refused empty, with a
// comma, or with white space anywhere (what benchcmp's --labels refuses
// too), and taken otherwise.
func TestLabelKeyOK(t *testing.T) {
	for _, tc := range []struct {
		key  string
		want bool
	}{
		{"runtime", true}, {"operator", true}, {"path_2", true}, {"über", true},
		{"", false}, {"a,b", false}, {"a b", false}, {"a\tb", false}, {"a\n", false}, {" a", false}, {"a\u00a0b", false},
	} {
		if got := LabelKeyOK(tc.key); got != tc.want {
			t.Errorf("LabelKeyOK(%q) = %v, want %v", tc.key, got, tc.want)
		}
	}
}

// TestWriteProfileNamedLikeAFlag checks that a profile whose name starts
// with a dash (given as -x.pprof, or ./-x.pprof, which the subprocess is
// given cleaned) is drawn as the file it is: the driver's flag parser
// must not take it for a flag.
func TestWriteProfileNamedLikeAFlag(t *testing.T) {
	data, err := os.ReadFile("testdata/imported.pprof")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "-imported.pprof"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	for _, name := range []string{"-imported.pprof", "./-imported.pprof"} {
		var buf bytes.Buffer
		if err := Write(context.Background(), &buf, Options{Profile: name, Labels: []string{"runtime"}}); err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if !bytes.Contains(buf.Bytes(), []byte(`{"FullName":"interactive","FileName":"runtime"`)) {
			t.Errorf("%s: flame graph has no runtime:interactive frame", name)
		}
	}
}

// TestWritePageHasNoDeadControls checks that the page, opened from a
// file, offers no control that needs pprof's web server: no link but the
// details' "#" (pprof's menus link to ./top, ./source, ?f=..., which from
// a file are a missing file or the same page unchanged), no menu, button,
// form or input but the search box; and that it keeps the controls its
// script runs by itself.
func TestWritePageHasNoDeadControls(t *testing.T) {
	for name, opts := range map[string]Options{
		"plain page": {Profile: "testdata/imported.pprof", Labels: []string{"runtime", "operator"}},
		"diff page":  {Profile: "testdata/imported.pprof", Base: "testdata/direct.pprof"},
	} {
		var buf bytes.Buffer
		if err := Write(context.Background(), &buf, opts); err != nil {
			t.Fatal(err)
		}
		page := buf.String()
		// Markup only: the scripts name the controls they would bind.
		markup := regexp.MustCompile(`(?s)<script>.*?</script>`).ReplaceAllString(page, "")
		for _, a := range regexp.MustCompile(`<a\b[^>]*>`).FindAllString(markup, -1) {
			if m := regexp.MustCompile(`\bhref="([^"]*)"`).FindStringSubmatch(a); m != nil && m[1] != "#" {
				t.Errorf("%s: link %s leads nowhere from a file", name, a)
			}
		}
		for _, bad := range []string{`<button`, `<form`, `<select`, `class="menu-item"`, `class="submenu"`, `id="save-config"`, `id="action-focus"`, `id="action-source"`} {
			if strings.Contains(markup, bad) {
				t.Errorf("%s: has %s, a control of pprof's server", name, bad)
			}
		}
		for _, in := range regexp.MustCompile(`<input\b[^>]*>`).FindAllString(markup, -1) {
			if !strings.Contains(in, `id="search"`) {
				t.Errorf("%s: input %s does nothing in a file", name, in)
			}
		}
		for _, want := range []string{`id="search"`, `id="details"`, `id="detailsbox"`, `id="stack-chart"`, `id="action-menu"`, `id="action-title"`, `id="current-details-left"`} {
			if !strings.Contains(markup, want) {
				t.Errorf("%s: lost %s, which the page's script needs", name, want)
			}
		}
		if !strings.Contains(page, "stackViewer(") {
			t.Errorf("%s: no stackViewer call", name)
		}
	}
}

// TestWriteTitle checks that Options.Title names the page, its details
// link and the details' first line, escaped, in place of pprof's
// "executable cpu".
func TestWriteTitle(t *testing.T) {
	var buf bytes.Buffer
	title := "CPU of BenchmarkLookup/index=direct <&>"
	if err := Write(context.Background(), &buf, Options{Profile: "testdata/imported.pprof", Title: title}); err != nil {
		t.Fatal(err)
	}
	esc := "CPU of BenchmarkLookup/index=direct &lt;&amp;&gt;"
	page := buf.String()
	for _, want := range []string{"<title>" + esc + "</title>", `id="details">` + esc + "</a>", `<div id="detailsbox">` + "\n      <div>" + esc + "</div>"} {
		if !strings.Contains(page, want) {
			t.Errorf("page has no %q", want)
		}
	}
}

// TestHTMLName: an .html name in any case is an HTML file's, and nothing
// else is.
func TestHTMLName(t *testing.T) {
	for name, want := range map[string]bool{
		"f.html": true, "F.HTML": true, "d/f.Html": true, ".html": true,
		"f.htm": false, "f.html.txt": false, "html": false, "f.svg": false, "": false,
	} {
		if got := HTMLName(name); got != want {
			t.Errorf("HTMLName(%q) = %v, want %v", name, got, want)
		}
	}
}
