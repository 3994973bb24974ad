package benchrun

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"

	"github.com/google/pprof/driver"
)

// ErrFlamegraph is returned when the flame graph cannot be produced from a
// CPU profile.
var ErrFlamegraph = errors.New("benchrun: flame graph")

// WriteFlamegraph writes a self-contained HTML flame graph of the CPU
// profile at profile to out, through pprof's web interface handlers called
// in process: no server listens, no browser opens, nothing is fetched from
// the network and graphviz is not needed.
//
// NB: the pprof driver keeps some settings in process-wide state, so two
// exports must not run at once in one process; benchrun makes one per run.
func WriteFlamegraph(profile, out string) error {
	var page []byte
	var handlerErr error
	fs := &pprofFlags{args: []string{"-http=localhost:0", "-no_browser", "-symbolize=none", profile}}
	err := driver.PProf(&driver.Options{
		Flagset: fs,
		UI:      silentUI{},
		HTTPServer: func(args *driver.HTTPServerArgs) error {
			h, ok := args.Handlers["/flamegraph"]
			if !ok {
				handlerErr = fmt.Errorf("%w: this pprof has no /flamegraph view", ErrFlamegraph)
				return nil
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/flamegraph", nil))
			if rec.Code != http.StatusOK {
				handlerErr = fmt.Errorf("%w: pprof answered %d: %s", ErrFlamegraph, rec.Code, strings.TrimSpace(rec.Body.String()))
				return nil
			}
			page = rec.Body.Bytes()
			return nil
		},
	})
	if err != nil {
		return fmt.Errorf("%w: %v", ErrFlamegraph, err)
	}
	if handlerErr != nil {
		return handlerErr
	}
	if len(page) == 0 {
		return fmt.Errorf("%w: pprof produced no page for %s", ErrFlamegraph, profile)
	}
	return writeFileAtomic(out, func(w io.Writer) error {
		_, err := io.Copy(w, bytes.NewReader(page))
		return err
	})
}

// pprofFlags is the driver.FlagSet pprof parses its options from, fed a
// fixed command line.
type pprofFlags struct {
	fs    *flag.FlagSet
	args  []string
	extra string
}

func (p *pprofFlags) set() *flag.FlagSet {
	if p.fs == nil {
		p.fs = flag.NewFlagSet("pprof", flag.ContinueOnError)
		p.fs.SetOutput(io.Discard)
	}
	return p.fs
}

func (p *pprofFlags) Bool(name string, def bool, usage string) *bool {
	return p.set().Bool(name, def, usage)
}
func (p *pprofFlags) Int(name string, def int, usage string) *int {
	return p.set().Int(name, def, usage)
}
func (p *pprofFlags) Float64(name string, def float64, usage string) *float64 {
	return p.set().Float64(name, def, usage)
}
func (p *pprofFlags) String(name string, def string, usage string) *string {
	return p.set().String(name, def, usage)
}
func (p *pprofFlags) StringList(name string, def string, usage string) *[]*string {
	return &[]*string{p.set().String(name, def, usage)}
}
func (p *pprofFlags) ExtraUsage() string      { return p.extra }
func (p *pprofFlags) AddExtraUsage(eu string) { p.extra += eu }
func (p *pprofFlags) Parse(usage func()) []string {
	if err := p.set().Parse(p.args); err != nil {
		usage()
		return nil
	}
	return p.fs.Args()
}

// silentUI discards pprof's messages; errors come back from PProf.
type silentUI struct{}

func (silentUI) ReadLine(string) (string, error)     { return "", io.EOF }
func (silentUI) Print(...any)                        {}
func (silentUI) PrintErr(...any)                     {}
func (silentUI) IsTerminal() bool                    { return false }
func (silentUI) WantBrowser() bool                   { return false }
func (silentUI) SetAutoComplete(func(string) string) {}

// flamegraphProfile returns the CPU profile path a --flamegraph run
// records into: --cpuprofile when given, else a temporary file removed
// afterwards.
func flamegraphProfile(cpuprofile string) (path string, cleanup func(), err error) {
	if cpuprofile != "" {
		return cpuprofile, func() {}, nil
	}
	f, err := os.CreateTemp("", "benchrun-cpu-*.pprof")
	if err != nil {
		return "", nil, err
	}
	f.Close()
	return f.Name(), func() { os.Remove(f.Name()) }, nil
}
