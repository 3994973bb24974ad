package benchcmp

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/tracebench/tracebench/internal/benchflame"
)

// chromium returns the path of a chromium or chrome binary, or "".
func chromium() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// pageProblems collects what must not happen while a page loads: a
// JavaScript exception, a console error or warning (pprof's script warns
// of each element it misses), a failed load, or any request
// besides the page itself (the pages must be self-contained).
type pageProblems struct {
	mu       sync.Mutex
	page     string
	problems []string
}

func (p *pageProblems) add(format string, args ...any) {
	p.mu.Lock()
	p.problems = append(p.problems, fmt.Sprintf(format, args...))
	p.mu.Unlock()
}

func (p *pageProblems) listen(ev any) {
	switch ev := ev.(type) {
	case *runtime.EventExceptionThrown:
		p.add("JavaScript exception: %s", (&chromedp.ExceptionError{ExceptionDetails: ev.ExceptionDetails}).Error())
	case *runtime.EventConsoleAPICalled:
		if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeAssert || ev.Type == runtime.ConsoleAPICalledTypeWarning {
			var args []string
			for _, a := range ev.Args {
				args = append(args, string(a.Value)+a.Description)
			}
			p.add("console.%s: %s", ev.Type, strings.Join(args, " "))
		}
	case *cdplog.EventEntryAdded:
		if ev.Entry != nil && ev.Entry.Level == cdplog.EntryLevelError {
			p.add("browser log error: %s (%s)", ev.Entry.Text, ev.Entry.URL)
		}
	case *network.EventLoadingFailed:
		p.add("failed load: %s %s", ev.Type, ev.ErrorText)
	case *network.EventRequestWillBeSent:
		if u := ev.Request.URL; u != p.page && !strings.HasPrefix(u, "data:") {
			p.add("request besides the page: %s", u)
		}
	}
}

// openPage opens path in a fresh tab of the browser in alloc, waits until
// check (a JavaScript expression giving a number) is at least min, and
// fails the test on any page problem.
func openPage(t *testing.T, alloc context.Context, path, check string, min int) {
	t.Helper()
	abs, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	pageURL := (&url.URL{Scheme: "file", Path: abs}).String()
	probs := &pageProblems{page: pageURL}
	ctx, cancel := chromedp.NewContext(alloc, chromedp.WithListener(probs.listen))
	defer cancel()
	ctx, cancelT := context.WithTimeout(ctx, 60*time.Second)
	defer cancelT()
	if err := chromedp.Do(ctx, chromedp.Navigate(pageURL)); err != nil {
		t.Fatalf("opening %s: %v", path, err)
	}
	var n int
	deadline := time.Now().Add(10 * time.Second)
	for {
		n, err = chromedp.Run(ctx, chromedp.Evaluate[int](check))
		if err != nil {
			t.Fatalf("%s: evaluating %s: %v", path, check, err)
		}
		if n >= min || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if n < min {
		t.Errorf("%s: %s = %d, want at least %d", filepath.Base(path), check, n, min)
	}
	// Let late errors arrive.
	chromedp.Do(ctx, chromedp.Sleep(300*time.Millisecond))
	probs.mu.Lock()
	defer probs.mu.Unlock()
	for _, p := range probs.problems {
		t.Errorf("%s: %s", filepath.Base(path), p)
	}
}

// pickRuntime clicks the flame graph's "interactive" root frame, after a
// right click on it, and gives 1 if the page did what it says, else a
// negative number telling which step failed (0 before the frames are
// drawn).
const pickRuntime = `(() => {
  const texts = () => Array.from(document.querySelectorAll('#stack-chart .boxbg')).map(b => b.textContent);
  const box = Array.from(document.querySelectorAll('#stack-chart .boxbg')).find(b => b.textContent === 'interactive');
  if (!box) return 0;
  if (!texts().includes('maintenance')) return -1;
  box.dispatchEvent(new MouseEvent('contextmenu', {bubbles: true, cancelable: true}));
  if (getComputedStyle(document.getElementById('action-menu')).display !== 'none') return -2;
  box.dispatchEvent(new MouseEvent('mousedown', {bubbles: true}));
  box.dispatchEvent(new MouseEvent('click', {bubbles: true}));
  const p = new URLSearchParams(location.search).get('p');
  if (p === null || !p.includes('interactive')) return -3;
  if (texts().includes('maintenance') || !texts().includes('interactive')) return -4;
  document.getElementById('details').dispatchEvent(new MouseEvent('click', {bubbles: true, cancelable: true}));
  if (getComputedStyle(document.getElementById('detailsbox')).display !== 'block') return -5;
  return 1;
})()`

// TestBrowserOpensReportAndFlameGraphs opens the HTML report and the plain
// and differential flame graphs from files in headless chromium and fails
// on a JavaScript error, a failed or outside resource load, or a page
// without its charts or frames.
func TestBrowserOpensReportAndFlameGraphs(t *testing.T) {
	exe := chromium()
	if exe == "" {
		t.Skip("no chromium on PATH (chromium, chromium-browser, google-chrome): scripts/browser-deps.sh installs Debian's chromium")
	}
	if testing.Short() {
		t.Skip("starts a browser")
	}
	dir := t.TempDir()

	report := filepath.Join(dir, "report.html")
	suite := filepath.Join(dir, "suite.html")
	for _, tc := range []struct {
		path  string
		files []string
		mod   func(*CompareConfig)
	}{
		{report, []string{td("regress-old.txt"), td("regress-new.txt")}, nil},
		{suite, []string{td("suite.txt")}, func(c *CompareConfig) { c.Col = "/index@(direct imported)" }},
	} {
		out, _, err := compare(t, func(c *CompareConfig) {
			c.Format = "html"
			if tc.mod != nil {
				tc.mod(c)
			}
		}, tc.files...)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(tc.path, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	plain := filepath.Join(dir, "flame.html")
	if err := benchflame.WriteFile(context.Background(), plain, benchflame.Options{
		Profile: "../benchflame/testdata/imported.pprof", Labels: []string{"runtime", "operator"}}); err != nil {
		t.Fatal(err)
	}
	diff := filepath.Join(dir, "diff.html")
	if err := Profile(context.Background(), ProfileConfig{
		Base: "../benchflame/testdata/direct.pprof", Other: "../benchflame/testdata/imported.pprof",
		Out: diff, Labels: []string{"runtime", "operator"}}); err != nil {
		t.Fatal(err)
	}

	browserTmp := shortTempDir(t)
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(exe),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(filepath.Join(dir, "profile")),
		// Chromium makes its singleton socket's directory under TMPDIR
		// and leaves it there when it is killed: keep it in a directory
		// the test removes.
		chromedp.Env("TMPDIR=" + browserTmp),
	}
	alloc, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()

	// Every chart is an SVG drawn with text and paths.
	charts := `Array.from(document.querySelectorAll('figure.chart svg')).filter(s => s.querySelectorAll('path').length > 0 && s.querySelectorAll('text').length > 0).length`
	// 5 units, each with a distribution and a ratio chart.
	openPage(t, alloc, report, charts, 10)
	// 5 units with distribution, ratio and log-log scaling charts.
	openPage(t, alloc, suite, charts, 15)
	openPage(t, alloc, suite, `document.querySelectorAll('figure.chart[data-chart=scaling] svg').length`, 5)
	// pprof's stack viewer draws one box per frame.
	frames := `document.querySelectorAll('#stack-chart .boxbg').length`
	openPage(t, alloc, plain, frames, 20)
	openPage(t, alloc, diff, frames, 20)
	// A click on a label frame draws the graph from it (pprof's pivot,
	// kept in the page's own URL), also on a page opened from a file: the
	// runtime's frame becomes the only root, the other runtime's frames
	// are gone. A right click opens no menu of pprof's (its entries need
	// its server), and the title's link opens the details.
	for _, page := range []string{plain, diff} {
		openPage(t, alloc, page, pickRuntime, 1)
	}
	// The difference says which profile is the base, in its title and in
	// the details its title's link opens.
	openPage(t, alloc, diff, `(document.title === '../benchflame/testdata/imported.pprof minus base ../benchflame/testdata/direct.pprof' && document.getElementById('detailsbox').textContent.includes('Difference: ../benchflame/testdata/imported.pprof minus base ../benchflame/testdata/direct.pprof')) ? 1 : 0`, 1)
}

// shortTempDir returns a directory, removed when the test ends, short
// enough for chromium's singleton socket inside it
// (DIR/org.chromium.Chromium.XXXXXX/SingletonSocket): a socket's path holds
// at most 107 bytes, which t.TempDir() under a long $TMPDIR passes
// (chromium then fails to start: "Socket path too long").
func shortTempDir(t *testing.T) string {
	t.Helper()
	const socket = len("/org.chromium.Chromium.XXXXXX/SingletonSocket")
	for _, parent := range []string{"", "/tmp"} {
		dir, err := os.MkdirTemp(parent, "chromium")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
		if len(dir)+socket <= 107 {
			return dir
		}
	}
	t.Skip("no temporary directory short enough for chromium's socket")
	return ""
}
