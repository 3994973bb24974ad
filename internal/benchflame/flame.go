package benchflame

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"unicode"
	"unicode/utf8"

	"github.com/google/pprof/driver"
	"github.com/google/pprof/profile"

	"github.com/tracebench/tracebench/workloads/spec"
)

// Sentinel errors.
var (
	// ErrProfile is wrapped when a profile cannot be read or drawn; the
	// message names the file.
	ErrProfile = errors.New("benchflame: bad profile")
	// ErrExport is wrapped when the export itself fails: pprof produced no
	// flame graph, or the subprocess could not run.
	ErrExport = errors.New("benchflame: export failed")
	// ErrInterrupted is returned when the export was stopped: its context
	// was cancelled, or the subprocess was ended by SIGINT or SIGTERM (as
	// Ctrl-C sends to every process of the terminal's foreground group).
	ErrInterrupted = errors.New("benchflame: interrupted")
)

// childEnv is the environment variable that makes RunChildIfRequested run
// an export instead of the program.
const childEnv = "TRACEBENCH_BENCHFLAME_CHILD"

// Options says what to draw.
type Options struct {
	// Profile is the path of a pprof profile (CPU profiles from
	// runtime/pprof are already symbolized; nothing is fetched).
	Profile string `json:"profile"`
	// Base, if set, is the path of a profile subtracted from Profile
	// (pprof's -diff_base): the graph shows Profile minus Base.
	Base string `json:"base,omitempty"`
	// Labels are sample label keys shown as root frames (pprof's
	// -tagroot), as in runtime,operator, each at most once; empty for none.
	Labels []string `json:"labels,omitempty"`
	// Title, if set, names the page: its title, the title's link (which
	// opens the details) and the details' first line, in place of pprof's
	// (the executable's name and the sample type, alike for every run).
	Title string `json:"title,omitempty"`

	// profileName and baseName are Profile and Base as the caller gave
	// them, when Write resolved them for the subprocess (to the file a
	// link or /dev/stdin leads to): messages and the page name the files
	// the caller named. Each is kept by its role, not by its path: a link
	// and its file are one path once resolved.
	profileName, baseName string
}

// childOptions is what Write sends its subprocess: the Options and the
// names to show for the paths it resolved.
type childOptions struct {
	Options
	ProfileName string `json:"profile_name,omitempty"`
	BaseName    string `json:"base_name,omitempty"`
}

// profileShown and baseShown return Profile and Base as the caller gave
// them.
func (o Options) profileShown() string { return cmp.Or(o.profileName, o.Profile) }
func (o Options) baseShown() string    { return cmp.Or(o.baseName, o.Base) }

// pathErr is spec.PathErr with the path of an *os.PathError shown as name,
// the file as the caller gave it.
func pathErr(err error, name string) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		err = &os.PathError{Op: pe.Op, Path: name, Err: pe.Err}
	}
	return spec.PathErr(err)
}

// benchResultsHint returns, for a file that is no profile, a note that it
// reads as Go benchmark results (its first line that is neither blank nor
// a comment is a "key: value" configuration line, a Unit metadata line, as
// every file benchrun writes starts with, or a Benchmark line), the
// likeliest mix-up of a result file and its profile; "" otherwise.
func benchResultsHint(f *os.File) string {
	var buf [4096]byte
	n, _ := f.ReadAt(buf[:], 0)
	for line := range strings.Lines(string(buf[:n])) {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if strings.HasPrefix(line, "Benchmark") || strings.HasPrefix(line, "Unit ") || benchConfigLine(line) {
			return " (it reads as Go benchmark results, not a pprof profile)"
		}
		return ""
	}
	return ""
}

// benchConfigLine reports whether line is a configuration line of the Go
// benchmark format: a key of lower-case letters, digits, - and _ (no
// space, starting with a letter), a colon, then a space or nothing.
func benchConfigLine(line string) bool {
	key, rest, ok := strings.Cut(line, ":")
	if !ok || key == "" || key[0] < 'a' || key[0] > 'z' || (rest != "" && rest[0] != ' ') {
		return false
	}
	return !strings.ContainsFunc(key, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_')
	})
}

func (o Options) check() error {
	if o.Profile == "" {
		return fmt.Errorf("%w: no profile given", ErrProfile)
	}
	for _, f := range []struct{ path, name string }{{o.Profile, o.profileShown()}, {o.Base, o.baseShown()}} {
		if f.path == "" {
			continue
		}
		st, err := os.Stat(f.path)
		if err != nil {
			return fmt.Errorf("%w: %s", ErrProfile, pathErr(err, f.name))
		}
		if st.IsDir() {
			return fmt.Errorf("%w: %s: is a directory", ErrProfile, spec.Path(f.name))
		}
		// The export reads a profile twice (parse, then pprof's driver),
		// in a subprocess: a named pipe would be drained by the first read
		// and the second would wait for a writer forever.
		if !st.Mode().IsRegular() {
			return fmt.Errorf("%w: %s: not a regular file (a pipe or a device cannot be read back): save the profile to a file first", ErrProfile, spec.Path(f.name))
		}
	}
	for i, l := range o.Labels {
		if !LabelKeyOK(l) {
			return fmt.Errorf("%w: label key %s: want a non-empty key without commas or spaces", ErrProfile, spec.Quote(l))
		}
		// pprof's -tagroot would draw the key's frames twice, one on top
		// of the other.
		if slices.Contains(o.Labels[:i], l) {
			return fmt.Errorf("%w: label key %s given twice", ErrProfile, spec.Quote(l))
		}
	}
	return nil
}

// HTMLName reports whether path names an HTML file, as --flamegraph of
// benchrun and benchcmp requires: it ends in .html in any case (F.HTML,
// f.Html), as a browser and a file manager take it.
func HTMLName(path string) bool {
	return strings.EqualFold(filepath.Ext(path), ".html")
}

// LabelKeyOK reports whether l can be a label key drawn as root frames:
// not empty (pprof's -tagroot drops an empty key, and with it the frames
// asked for), with no comma (-tagroot separates keys by commas) and no
// white space (no label of the engine's holds any, and a key such as
// "a b" is a quoting mistake more often than a key). benchcmp's --labels
// and Options.Labels are checked alike.
func LabelKeyOK(l string) bool {
	return l != "" && !strings.ContainsFunc(l, func(r rune) bool { return r == ',' || unicode.IsSpace(r) })
}

// parse reads each profile on its own, so that a bad one is named (the
// driver's message names Profile first even when Base is at fault), and
// refuses a Base that shares no sample type with Profile, naming both.
func (o Options) parse() error {
	read := func(path, name string) (*profile.Profile, error) {
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("%w: %s", ErrProfile, pathErr(err, name))
		}
		defer f.Close()
		p, err := profile.Parse(f)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %s%s", ErrProfile, spec.Path(name), pathErr(err, name), benchResultsHint(f))
		}
		return p, nil
	}
	p, err := read(o.Profile, o.profileShown())
	if err != nil || o.Base == "" {
		return err
	}
	b, err := read(o.Base, o.baseShown())
	if err != nil {
		return err
	}
	types := func(p *profile.Profile) []string {
		var ts []string
		for _, st := range p.SampleType {
			ts = append(ts, st.Type+"/"+st.Unit)
		}
		return ts
	}
	pt, bt := types(p), types(b)
	for _, t := range pt {
		if slices.Contains(bt, t) {
			return nil
		}
	}
	return fmt.Errorf("%w: %s (%s) and base %s (%s) share no sample type: profiles of different kinds", ErrProfile, spec.Path(o.profileShown()), strings.Join(pt, ", "), spec.Path(o.baseShown()), strings.Join(bt, ", "))
}

// Export draws the flame graph of opts with pprof's driver in this process
// and writes it to w as one self-contained HTML page (inline script and
// style, no network).
//
// REQUIRES: at most one Export per process. The driver keeps its settings in
// a process-wide variable, so a second export would start from the first
// one's settings and two at once would race. Use Write, which runs Export in
// a fresh subprocess, everywhere except in that subprocess.
func Export(w io.Writer, opts Options) error {
	if err := opts.check(); err != nil {
		return err
	}
	if err := opts.parse(); err != nil {
		return err
	}
	args := []string{"-http=localhost:1", "-no_browser", "-symbolize=none"}
	if len(opts.Labels) > 0 {
		args = append(args, "-tagroot="+strings.Join(opts.Labels, ","))
	}
	if opts.Base != "" {
		args = append(args, "-diff_base="+opts.Base)
	}
	// After "--", the profile is the source whatever its name: a file
	// named -x.pprof would otherwise be parsed as a flag, and refused.
	args = append(args, "--", opts.Profile)

	fs := &flagSet{fs: flag.NewFlagSet("pprof", flag.ContinueOnError), args: args}
	var msgs bytes.Buffer
	fs.fs.SetOutput(&msgs)
	var page []byte
	var status int
	err := driver.PProf(&driver.Options{
		Flagset: fs,
		UI:      &ui{out: &msgs},
		HTTPServer: func(a *driver.HTTPServerArgs) error {
			h := a.Handlers["/flamegraph"]
			if h == nil {
				return fmt.Errorf("%w: pprof offers no /flamegraph view", ErrExport)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/flamegraph", nil))
			status, page = rec.Code, rec.Body.Bytes()
			return nil
		},
	})
	if fs.err != nil {
		return fmt.Errorf("%w: %v", ErrExport, fs.err)
	}
	if err != nil {
		return fmt.Errorf("%w: %s: %s %s", ErrProfile, spec.Path(opts.profileShown()), pathErr(err, opts.profileShown()), strings.TrimSpace(msgs.String()))
	}
	if status != http.StatusOK || !bytes.Contains(page, []byte("stackViewer(")) {
		return fmt.Errorf("%w: pprof answered %d: %s %s", ErrExport, status, bytes.TrimSpace(page), strings.TrimSpace(msgs.String()))
	}
	page = staticPage(page)
	if opts.Base != "" {
		page = nameDiff(page, opts.profileShown(), opts.baseShown())
	}
	if opts.Title != "" {
		page = retitle(page, opts.Title, opts.Title)
	}
	_, err = w.Write(page)
	return err
}

// nameDiff says on a page of profile minus base which is which: pprof's
// page names neither (its title and details are the profile's own, File:
// and Time: of one of them), so a difference could not be told from a
// plain graph, nor its direction from the files. The title and the first
// line of the details box (the title's link opens it) become "profile
// minus base".
func nameDiff(page []byte, profile, base string) []byte {
	what := spec.Path(profile) + " minus base " + spec.Path(base)
	return retitle(page, what, "Difference: "+what+" (pprof's diff_base)")
}

// retitle makes title the page's title and its title link's text, and
// puts detail first in the details box the link opens; both are text,
// escaped here.
func retitle(page []byte, title, detail string) []byte {
	title = html.EscapeString(title)
	page = titleRE.ReplaceAllLiteral(page, []byte("<title>"+title+"</title>"))
	page = detailsRE.ReplaceAllFunc(page, func(m []byte) []byte {
		// The link's text is pprof's title.
		return append(slices.Clip(detailsRE.FindSubmatch(m)[1]), []byte(title+"</a>")...)
	})
	return bytes.Replace(page, []byte(`<div id="detailsbox">`), []byte(`<div id="detailsbox">`+"\n      <div>"+html.EscapeString(detail)+"</div>"), 1)
}

var (
	titleRE   = regexp.MustCompile(`<title>[^<]*</title>`)
	detailsRE = regexp.MustCompile(`(<a [^>]*id="details"[^>]*>)[^<]*</a>`)
)

// Write draws the flame graph of opts in a subprocess, the running
// executable started again with an environment variable that makes
// RunChildIfRequested do the export, and writes the HTML to w. Any number of
// Writes may run in one process, also at once.
//
// REQUIRES: the executable's main (or a test binary's TestMain) calls
// RunChildIfRequested before anything else.
func Write(ctx context.Context, w io.Writer, opts Options) error {
	if err := opts.check(); err != nil {
		return err
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("%w: finding this executable: %v", ErrExport, err)
	}
	// The subprocess opens the profiles by name: one named through this
	// process's own descriptors (--base /dev/stdin < base.pprof,
	// /dev/fd/3) would there be the subprocess's, its options on a pipe.
	// It gets the file each resolves to, with the names given, which its
	// messages show: a message is not edited afterwards, where a resolved
	// path could also be part of another (a link to cpu.pprof and a file
	// new/cpu.pprof).
	child := childOptions{Options: opts}
	for _, f := range []struct{ path, name *string }{{&child.Profile, &child.ProfileName}, {&child.Base, &child.BaseName}} {
		if *f.path == "" {
			continue
		}
		if real, err := filepath.EvalSymlinks(*f.path); err == nil && real != *f.path {
			*f.name, *f.path = *f.path, real
		}
	}
	in, err := json.Marshal(child)
	if err != nil {
		return err
	}
	// pprof's web view, which draws the page, reads the user's saved
	// settings from os.UserConfigDir, and fails without one (HOME and
	// XDG_CONFIG_HOME unset, as in a service's environment): the
	// subprocess gets an empty configuration directory of its own, so
	// the page depends on neither.
	config, err := os.MkdirTemp("", "benchflame-config-*")
	if err != nil {
		return fmt.Errorf("%w: %v", ErrExport, err)
	}
	defer os.RemoveAll(config)
	if config, err = filepath.Abs(config); err != nil {
		return fmt.Errorf("%w: %v", ErrExport, err)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, exe)
	cmd.Env = append(os.Environ(), childEnv+"=1", "XDG_CONFIG_HOME="+config)
	cmd.Stdin = bytes.NewReader(in)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil || interruptedBySignal(cmd.ProcessState) {
			return ErrInterrupted
		}
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = fmt.Sprintf("%v (does main call benchflame.RunChildIfRequested first?)", err)
		}
		if strings.Contains(msg, ErrProfile.Error()) {
			return fmt.Errorf("%w: %s", ErrProfile, strings.TrimPrefix(msg, ErrProfile.Error()+": "))
		}
		return fmt.Errorf("%w: %s", ErrExport, msg)
	}
	if !bytes.Contains(stdout.Bytes(), []byte("stackViewer(")) {
		return fmt.Errorf("%w: the subprocess wrote no flame graph (does main call benchflame.RunChildIfRequested first?)", ErrExport)
	}
	_, err = w.Write(stdout.Bytes())
	return err
}

// interruptedBySignal says whether a process was ended by SIGINT or
// SIGTERM.
func interruptedBySignal(ps *os.ProcessState) bool {
	if ps == nil {
		return false
	}
	ws, ok := ps.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && (ws.Signal() == syscall.SIGINT || ws.Signal() == syscall.SIGTERM)
}

// WriteFile is Write to a file at path, created or replaced. The page is
// written to a temporary file in path's directory and renamed to path, so
// path holds either what it held before or the whole page: never part of
// one, whether the export or the write fails.
func WriteFile(ctx context.Context, path string, opts Options) error {
	var buf bytes.Buffer
	if err := Write(ctx, &buf, opts); err != nil {
		return err
	}
	return writeFileAtomic(path, buf.Bytes())
}

// maxTempBase is the most of a destination's base name a temporary name
// holds: "." + base + ".tmp" + CreateTemp's random part (at most 10
// digits) + commitAll's ".old" stays within the 255 bytes a file name may
// have, so a destination whose own name fits is never refused, nor a
// second gen into one directory, for a temporary name too long. Every
// output benchrun and benchcmp write through a temporary file is named
// so.
const maxTempBase = 255 - len(".") - len(".tmp") - 10 - len(".old")

// TempPattern is the os.CreateTemp pattern for a temporary file beside path:
// a dot and path's base name, cut to maxTempBase bytes at a character's
// start.
func TempPattern(path string) string {
	base := filepath.Base(path)
	if len(base) > maxTempBase {
		n := maxTempBase
		for n > 0 && !utf8.RuneStart(base[n]) {
			n--
		}
		base = base[:n]
	}
	return "." + base + ".tmp*"
}

// writeFileAtomic writes data to path through a temporary file in the
// same directory, renamed into place; a symbolic link at path is
// followed, and a destination that is not a regular file (/dev/null) is
// written directly.
func writeFileAtomic(path string, data []byte) error {
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	} else {
		path = spec.Physical(path) // dirlink/../d.html is not ./d.html
	}
	if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() {
		return os.WriteFile(path, data, 0o666)
	}
	f, err := CreateOutputTemp(filepath.Dir(path), TempPattern(path), path)
	if err != nil {
		return named(err, path)
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return named(err, path)
}

// named returns err with the temporary file's name in it replaced by
// path, the file the caller asked for.
func named(err error, path string) error {
	var pe *os.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &pe):
		return &os.PathError{Op: pe.Op, Path: path, Err: pe.Err}
	case errors.As(err, &le):
		return &os.PathError{Op: le.Op, Path: path, Err: le.Err}
	}
	return err
}

// WriteProfile is Write for a profile held in memory: profile is the content
// of a pprof file (gzipped or not), as runtime/pprof.StartCPUProfile writes
// it; opts.Profile is ignored. The bytes go through a temporary file, removed
// before WriteProfile returns.
func WriteProfile(ctx context.Context, w io.Writer, profile []byte, opts Options) error {
	f, err := os.CreateTemp("", "benchflame-*.pprof")
	if err != nil {
		return fmt.Errorf("%w: %v", ErrExport, err)
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(profile); err != nil {
		f.Close()
		return fmt.Errorf("%w: %v", ErrExport, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("%w: %v", ErrExport, err)
	}
	opts.Profile = f.Name()
	return Write(ctx, w, opts)
}

// RunChildIfRequested does nothing in a normal run. In the subprocess Write
// starts, it reads the Options from standard input, runs Export to standard
// output and exits: 0 on success, 1 with the error on standard error.
func RunChildIfRequested() {
	if os.Getenv(childEnv) != "1" {
		return
	}
	var child childOptions
	if err := json.NewDecoder(os.Stdin).Decode(&child); err != nil {
		fmt.Fprintf(os.Stderr, "%v: reading options: %v\n", ErrExport, err)
		os.Exit(1)
	}
	opts := child.Options
	opts.profileName, opts.baseName = child.ProfileName, child.BaseName
	if err := Export(os.Stdout, opts); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// flagSet adapts a standard flag.FlagSet to the driver's FlagSet, parsing
// the fixed argument list Export builds.
type flagSet struct {
	fs    *flag.FlagSet
	args  []string
	extra string
	err   error
}

func (f *flagSet) Bool(n string, d bool, u string) *bool          { return f.fs.Bool(n, d, u) }
func (f *flagSet) Int(n string, d int, u string) *int             { return f.fs.Int(n, d, u) }
func (f *flagSet) Float64(n string, d float64, u string) *float64 { return f.fs.Float64(n, d, u) }
func (f *flagSet) String(n string, d string, u string) *string    { return f.fs.String(n, d, u) }
func (f *flagSet) ExtraUsage() string                             { return f.extra }
func (f *flagSet) AddExtraUsage(eu string)                        { f.extra += eu }

func (f *flagSet) StringList(n string, d string, u string) *[]*string {
	l := []*string{f.fs.String(n, d, u)}
	return &l
}

func (f *flagSet) Parse(usage func()) []string {
	if err := f.fs.Parse(f.args); err != nil {
		f.err = err
		return nil
	}
	return f.fs.Args()
}

// ui is the driver's UI: no terminal, no browser, messages kept for errors.
type ui struct{ out io.Writer }

func (u *ui) ReadLine(string) (string, error)     { return "", io.EOF }
func (u *ui) Print(a ...any)                      { fmt.Fprintln(u.out, a...) }
func (u *ui) PrintErr(a ...any)                   { fmt.Fprintln(u.out, a...) }
func (u *ui) IsTerminal() bool                    { return false }
func (u *ui) WantBrowser() bool                   { return false }
func (u *ui) SetAutoComplete(func(string) string) {}
