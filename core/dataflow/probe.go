package dataflow

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/tracebench/tracebench/core/batch"
	"github.com/tracebench/tracebench/core/frontier"
)

// Probe observes a stream's frontier on every worker of a runtime; its
// frontier is the meet over the workers. Safe for concurrent use.
type Probe struct {
	mu      sync.Mutex
	fronts  []frontier.Frontier
	joined  []bool
	changed chan struct{} // closed and replaced on every change
}

// NewProbe returns a probe for a dataflow running on workers workers.
func NewProbe(workers int) *Probe {
	p := &Probe{}
	p.init(workers)
	return p
}

func (p *Probe) init(workers int) {
	p.fronts, p.joined, p.changed = make([]frontier.Frontier, workers), make([]bool, workers), make(chan struct{})
}

func (p *Probe) set(worker int, f frontier.Frontier) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.fronts[worker] == f && p.joined[worker] {
		return
	}
	p.fronts[worker], p.joined[worker] = f, true
	close(p.changed)
	p.changed = make(chan struct{})
}

// Frontier returns the meet of the workers' frontiers ({0} until every
// worker has reported).
func (p *Probe) Frontier() frontier.Frontier {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.frontierLocked()
}

func (p *Probe) frontierLocked() frontier.Frontier {
	f := frontier.Empty()
	for i, x := range p.fronts {
		if !p.joined[i] {
			return frontier.Min()
		}
		f = f.Meet(x)
	}
	return f
}

// Passed reports whether the frontier has passed t: no more changes at t.
func (p *Probe) Passed(t frontier.Time) bool { return !p.Frontier().Beyond(t) }

// WaitPassed blocks until the frontier has passed t or ctx ends.
func (p *Probe) WaitPassed(ctx context.Context, t frontier.Time) error {
	for {
		p.mu.Lock()
		f, ch := p.frontierLocked(), p.changed
		p.mu.Unlock()
		if !f.Beyond(t) {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("dataflow: probe at %v waiting to pass %d: %w", f, t, ctx.Err())
		}
	}
}

type probeOp struct {
	p      *Probe
	worker int
}

func (o *probeOp) Step(in frontier.Frontier) frontier.Frontier {
	o.p.set(o.worker, in)
	return frontier.Empty()
}

func (o *probeOp) Shutdown() {}

// Capture records every update of an arrangement half (as presented) on
// every worker, for reading a dataflow's output accumulated at a time once
// its frontier has passed that time. It is for tests and checks: it keeps
// every update.
type Capture struct {
	Probe
	cmu  sync.Mutex
	rows map[string][]int64
	upd  map[string]map[frontier.Time]int64
}

// NewCapture returns a capture for a dataflow running on workers workers.
func NewCapture(workers int) *Capture {
	c := &Capture{rows: map[string][]int64{}, upd: map[string]map[frontier.Time]int64{}}
	c.Probe.init(workers) // in place: a Probe holds a mutex and is never copied
	return c
}

func (c *Capture) record(row []int64, t frontier.Time, d int64) {
	k := rowKey(row)
	if _, ok := c.rows[k]; !ok {
		c.rows[k] = slices.Clone(row)
		c.upd[k] = map[frontier.Time]int64{}
	}
	c.upd[k][t] += d
}

func rowKey(row []int64) string {
	var sb strings.Builder
	for i, x := range row {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(strconv.FormatInt(x, 10))
	}
	return sb.String()
}

// RowDiff is one row of an accumulated collection with its count.
type RowDiff struct {
	Row  []int64
	Diff int64
}

// At returns the captured collection accumulated at t: rows with a non-zero
// count, sorted. Meaningful once Passed(t).
func (c *Capture) At(t frontier.Time) []RowDiff {
	c.cmu.Lock()
	defer c.cmu.Unlock()
	var out []RowDiff
	for _, k := range slices.Sorted(maps.Keys(c.rows)) {
		var d int64
		for tm, x := range c.upd[k] {
			if tm <= t {
				d += x
			}
		}
		if d != 0 {
			out = append(out, RowDiff{Row: c.rows[k], Diff: d})
		}
	}
	slices.SortFunc(out, func(a, b RowDiff) int { return slices.Compare(a.Row, b.Row) })
	return out
}

// Times returns the times at which something was captured, ascending.
func (c *Capture) Times() []frontier.Time {
	c.cmu.Lock()
	defer c.cmu.Unlock()
	set := map[frontier.Time]bool{}
	for _, m := range c.upd {
		for t, d := range m {
			if d != 0 {
				set[t] = true
			}
		}
	}
	return slices.Sorted(maps.Keys(set))
}

type captureOp struct {
	c      *Capture
	worker int
	in     *Port[*batch.Batch]
	pres   batch.Presentation
	place  []int // place[i]: the collection column of key ++ val column i
	kv     []int64
	row    []int64
}

// placement maps the columns of key ++ val back to the collection's: key
// columns where key says, values in the remaining columns in order.
func placement(key []int, cols int) []int {
	place := slices.Clone(key)
	for c := range cols {
		if !slices.Contains(key, c) {
			place = append(place, c)
		}
	}
	return place
}

func (o *captureOp) Step(in frontier.Frontier) frontier.Frontier {
	msgs := o.in.Take()
	if len(msgs) > 0 {
		o.c.cmu.Lock()
		for _, b := range msgs {
			for cur := b.Cursor(); cur.KeyValid(); cur.StepKey() {
				for ; cur.ValValid(); cur.StepVal() {
					o.kv = append(append(o.kv[:0], cur.Key()...), cur.Val()...)
					o.row = append(o.row[:0], o.kv...)
					for i, c := range o.place {
						o.row[c] = o.kv[i]
					}
					times, diffs := cur.Updates()
					for i, t := range times {
						if pt, ok := o.pres.Present(t); ok {
							o.c.record(o.row, pt, diffs[i])
						}
					}
				}
			}
		}
		o.c.cmu.Unlock()
	}
	o.c.set(o.worker, in)
	return frontier.Empty()
}

func (o *captureOp) Shutdown() {}
