package benchrun

import (
	"fmt"
	"io"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
)

// progress reports finished samples on the error stream, never on the
// results stream: a bar when that stream is a terminal and the mode is
// auto, one line per sample otherwise (on, or auto off a terminal), and
// nothing when off.
type progress struct {
	w     io.Writer
	total int
	lines bool
	p     *mpb.Progress
	bar   *mpb.Bar
}

func newProgress(w io.Writer, mode string, terminal bool, total int) *progress {
	pr := &progress{w: w, total: total}
	switch {
	case mode == ProgressOff:
	case mode == ProgressAuto && terminal:
		pr.p = mpb.New(mpb.WithOutput(w), mpb.WithWidth(40), mpb.WithAutoRefresh())
		pr.bar = pr.p.AddBar(int64(total),
			mpb.PrependDecorators(decor.Name("benchrun "), decor.CountersNoUnit("%d/%d samples")),
			mpb.AppendDecorators(decor.Elapsed(decor.ET_STYLE_GO)))
	default:
		pr.lines = true
	}
	return pr
}

// done records that sample number n (1-based) of benchmark name finished.
func (pr *progress) done(n int, name string) {
	switch {
	case pr.bar != nil:
		pr.bar.Increment()
	case pr.lines:
		fmt.Fprintf(pr.w, "benchrun: %d/%d %s\n", n, pr.total, name)
	}
}

// stop ends the bar (complete or not) before anything else is printed.
// Calling it again does nothing.
func (pr *progress) stop() {
	if pr.p == nil {
		return
	}
	if !pr.bar.Completed() {
		pr.bar.Abort(false)
	}
	pr.p.Wait()
	pr.p, pr.bar = nil, nil
}
