package join

import (
	"errors"
	"fmt"

	"github.com/tracebench/tracebench/core/expr"

	"github.com/tracebench/tracebench/core/dataflow"
	"github.com/tracebench/tracebench/core/frontier"
)

// Sentinel errors. Each names a broken precondition of a kernel's caller;
// none is produced by the data (data problems become error rows, K3).
var (
	// ErrArity reports rows, keys or batches whose arities disagree with
	// the kernel's.
	ErrArity = errors.New("join: arity mismatch")
	// ErrStraddle reports a stream batch that straddles an acknowledged or
	// preloaded frontier (the batch is partly matched already).
	ErrStraddle = errors.New("join: stream batch straddles the acknowledged frontier")
	// ErrOrder reports a stream batch that starts before the upper of the
	// batch delivered before it on the same input.
	ErrOrder = errors.New("join: stream batch out of order")
	// ErrStageClosure reports a delta stage closure that can err.
	ErrStageClosure = errors.New("join: stage closure can err")
)

// chunkRows is the number of rows a Sink puts in one chunk before it starts
// another: large enough that the per-chunk closure dispatch is amortised,
// small enough to stay in cache.
const chunkRows = 4096

// Sink collects a kernel's output: ok rows in chunks of a fixed arity and
// error rows (one column, the code) in chunks of arity 1. Chunks are
// appended in emission order; Take hands them to the caller.
//
// A Sink is owned by one goroutine.
type Sink struct {
	arity int
	oks   []*dataflow.Chunk
	errs  []*dataflow.Chunk
	spare []*dataflow.Chunk // chunks returned by Recycle, reused before allocating
	// errCount is the sum of the diffs of every error row appended since
	// the sink was made (Take and Recycle do not reset it): the kernels
	// read it before and after a step to count the errors they produced.
	errCount int64
	// satT is the earliest time a kernel emitted at from a Saturated
	// batch (noteSaturated) while satPending; the numeric overflow for
	// it is appended when the sink's errors are next read
	// (flushSaturated). satAt is where the sink's one such error stands
	// once satDone: it is never retracted but to move to an earlier
	// time, so it stands at every later one.
	satT, satAt         frontier.Time
	satPending, satDone bool
}

// NewSink returns a sink for ok rows of the given arity.
func NewSink(arity int) *Sink { return &Sink{arity: arity} }

// Arity returns the arity of the sink's ok rows.
func (s *Sink) Arity() int { return s.arity }

func (s *Sink) chunk(arity int) *dataflow.Chunk {
	if n := len(s.spare); n > 0 {
		c := s.spare[n-1]
		s.spare = s.spare[:n-1]
		if c.Arity == arity {
			return c
		}
	}
	return dataflow.NewChunk(arity, chunkRows)
}

// okChunk returns the chunk the next ok row goes to, with room for it.
func (s *Sink) okChunk() *dataflow.Chunk {
	if n := len(s.oks); n > 0 && s.oks[n-1].Len() < chunkRows {
		return s.oks[n-1]
	}
	c := s.chunk(s.arity)
	s.oks = append(s.oks, c)
	return c
}

// Error appends an error row (code, t, d).
func (s *Sink) Error(code int64, t frontier.Time, d int64) {
	n := len(s.errs)
	if n == 0 || s.errs[n-1].Len() >= chunkRows {
		s.errs = append(s.errs, s.chunk(1))
		n++
	}
	c := s.errs[n-1]
	s.errCount += d
	c.Rows = append(c.Rows, code)
	c.Times = append(c.Times, t)
	c.Diffs = append(c.Diffs, d)
}

// ErrorCount returns the sum of the diffs of every error row appended since
// the sink was made.
func (s *Sink) ErrorCount() int64 {
	s.flushSaturated()
	return s.errCount
}

// sinkMark is a position in a Sink: the rows appended after it are those
// a kernel emitted since (earliestSince).
type sinkMark struct{ oks, okLen, errs, errLen int }

// mark returns the sink's current position.
func (s *Sink) mark() sinkMark {
	m := sinkMark{oks: len(s.oks), errs: len(s.errs)}
	if m.oks > 0 {
		m.okLen = s.oks[m.oks-1].Len()
	}
	if m.errs > 0 {
		m.errLen = s.errs[m.errs-1].Len()
	}
	return m
}

// earliestSince returns the least time of the rows, ok or error, appended
// after m, and false when there is none. REQUIRES: no Take or Recycle
// since m.
func (s *Sink) earliestSince(m sinkMark) (frontier.Time, bool) {
	var t frontier.Time
	found := false
	scan := func(cs []*dataflow.Chunk, n, from int) {
		// The mark's last chunk may have been filled further.
		i := max(n-1, 0)
		if n == 0 {
			from = 0
		}
		for ; i < len(cs); i, from = i+1, 0 {
			for _, x := range cs[i].Times[from:] {
				if !found || x < t {
					t, found = x, true
				}
			}
		}
	}
	scan(s.oks, m.oks, m.okLen)
	scan(s.errs, m.errs, m.errLen)
	return t, found
}

// saturatedError notes the `numeric overflow` a join adds where it
// multiplied counts of a Saturated batch (a merge saturated an overflowed
// count there; K3, docs/semantics.md §1.1) at the earliest time of the
// rows it emitted since m, if it emitted any (noteSaturated). The
// arrangement's own marker is at its frontier when the merge ran, which
// may be after the times the join reads the saturated count at.
func (s *Sink) saturatedError(m sinkMark) {
	if t, ok := s.earliestSince(m); ok {
		s.noteSaturated(t)
	}
}

// noteSaturated notes that a kernel emitted at t from a Saturated batch.
// The sink's one numeric overflow for it, with diff +1, goes at the
// earliest time noted before its errors are next read (flushSaturated):
// a step's kernels need not meet their saturated batches in time order.
// Once it is appended the sink adds no other; a later step that emits
// from a saturated batch at an earlier time (a product's time is the
// later of its two, so the times a join emits at do not rise step by
// step) moves it there. Added per pair of batches, per proposal or per
// source batch, the error's count grew with every round that read a
// saturated batch again.
func (s *Sink) noteSaturated(t frontier.Time) {
	if s.satDone && t >= s.satAt {
		return
	}
	if !s.satPending || t < s.satT {
		s.satT, s.satPending = t, true
	}
}

// flushSaturated appends the numeric overflow noteSaturated noted, if
// one is pending, or moves the one appended to the earlier time noted (a
// retraction where it stood, and the error at the new time: the sink
// emits at that time in this step, so its output has not passed either):
// every read of the sink's errors calls it first.
func (s *Sink) flushSaturated() {
	if !s.satPending {
		return
	}
	s.satPending = false
	if s.satDone {
		s.Error(expr.CodeOverflow, s.satAt, -1)
	}
	s.Error(expr.CodeOverflow, s.satT, 1)
	s.satAt, s.satDone = s.satT, true
}

// forwarded runs forward, which appends the errors an operator passes on
// from its inputs (Errors: its entries' errors, never counted as its own,
// K4), and returns how many of the errors it appended are the operator's
// own: the sink's numeric overflow for a batch a merge saturated that
// forward read (noteSaturated), 1 when it put the sink's one such error
// in place, else 0 (one stood already, or forward read no saturated
// batch; a move of the one that stood to an earlier time is a retraction
// and an addition, net 0). The operator counts it with its errors, as it
// counts the one a product of a saturated count adds (K3, K4).
func (s *Sink) forwarded(forward func()) int64 {
	s.flushSaturated()
	stood := s.satDone
	forward()
	s.flushSaturated()
	if s.satDone && !stood {
		return 1
	}
	return 0
}

// Oks returns the ok chunks collected so far (aliasing the sink).
func (s *Sink) Oks() []*dataflow.Chunk { return s.oks }

// Errs returns the error chunks collected so far (aliasing the sink).
func (s *Sink) Errs() []*dataflow.Chunk {
	s.flushSaturated()
	return s.errs
}

// Len returns the number of ok rows and of error rows collected.
func (s *Sink) Len() (oks, errs int) {
	s.flushSaturated()
	for _, c := range s.oks {
		oks += c.Len()
	}
	for _, c := range s.errs {
		errs += c.Len()
	}
	return oks, errs
}

// Take returns the collected chunks and forgets them; the caller owns them
// (for instance to send them downstream, after which they are immutable).
func (s *Sink) Take() (oks, errs []*dataflow.Chunk) {
	s.flushSaturated()
	oks, errs = s.oks, s.errs
	s.oks, s.errs = nil, nil
	return oks, errs
}

// Recycle empties the sink and keeps its chunks for reuse. REQUIRES: no
// chunk of the sink has been sent anywhere.
func (s *Sink) Recycle() {
	for _, c := range s.oks {
		c.Rows, c.Times, c.Diffs = c.Rows[:0], c.Times[:0], c.Diffs[:0]
		s.spare = append(s.spare, c)
	}
	for _, c := range s.errs {
		c.Rows, c.Times, c.Diffs = c.Rows[:0], c.Times[:0], c.Diffs[:0]
		s.spare = append(s.spare, c)
	}
	s.oks, s.errs = s.oks[:0], s.errs[:0]
}

// Push appends an ok row (copied) at time t with diff d.
func (s *Sink) Push(row []int64, t frontier.Time, d int64) {
	c := s.okChunk()
	c.Rows = append(c.Rows, row...)
	c.Times = append(c.Times, t)
	c.Diffs = append(c.Diffs, d)
}

// Closure is a join closure (§5.1): the equivalences, maps, filters and
// projection a stage applies to its joined rows, evaluated a chunk at a
// time (core/expr's map–filter–project program implements it).
//
// Apply evaluates every row of in and appends to out: the surviving rows
// at their time and diff, and for a row whose evaluation errs that error's
// code at the row's time with the row's diff (its multiplicity, docs/spec.md,
// "Expressions"). Rows failing an equivalence or a filter are dropped. Apply
// must not keep in, which the kernel reuses.
type Closure interface {
	// Arity returns the arity of the rows Apply emits.
	Arity() int
	// Apply evaluates the closure on a chunk of joined rows.
	Apply(in *dataflow.Chunk, out *Sink)
}

// Project is the closure without expressions: keep the rows whose columns
// in each equivalence class are equal, then project onto Cols. It never
// errs.
type Project struct {
	Equiv [][]int // classes of column indexes of the joined row
	Cols  []int   // output columns, indexes of the joined row
}

// Arity returns len(p.Cols).
func (p *Project) Arity() int { return len(p.Cols) }

// Apply implements Closure.
func (p *Project) Apply(in *dataflow.Chunk, out *Sink) {
	for i := range in.Len() {
		row := in.Row(i)
		if !p.equal(row) {
			continue
		}
		c := out.okChunk()
		for _, col := range p.Cols {
			c.Rows = append(c.Rows, row[col])
		}
		c.Times = append(c.Times, in.Times[i])
		c.Diffs = append(c.Diffs, in.Diffs[i])
	}
}

func (p *Project) equal(row []int64) bool {
	for _, class := range p.Equiv {
		x := row[class[0]]
		for _, c := range class[1:] {
			if row[c] != x {
				return false
			}
		}
	}
	return true
}

// checkClosure refuses a closure that reads columns the rows it is given
// (arity columns each) do not have: a Project's classes and columns, an
// MFP's input arity. Unchecked, such a closure would index past a row in
// its first step, on a worker, and end the process. A Closure of the
// caller's own type is its own to check.
func checkClosure(c Closure, arity int) error {
	switch c := c.(type) {
	case *Project:
		if c == nil {
			return fmt.Errorf("%w: nil *Project closure", ErrArity)
		}
		for i, class := range c.Equiv {
			if len(class) == 0 {
				return fmt.Errorf("%w: Project.Equiv[%d] is empty", ErrArity, i)
			}
			if err := checkCols(class, arity); err != nil {
				return fmt.Errorf("Project.Equiv[%d]: %w", i, err)
			}
		}
		if err := checkCols(c.Cols, arity); err != nil {
			return fmt.Errorf("Project.Cols: %w", err)
		}
	case *MFP:
		if c == nil {
			return fmt.Errorf("%w: nil *MFP closure", ErrArity)
		}
		if c.m.InputArity() != arity {
			return fmt.Errorf("%w: closure takes rows of %d columns, the joined rows have %d", ErrArity, c.m.InputArity(), arity)
		}
	}
	return nil
}

// finish applies closure (if any) to the joined rows collected in stage,
// moving them to out, and moves stage's errors to out. With a nil closure
// stage is out and nothing moves.
func finish(closure Closure, stage, out *Sink) {
	if closure == nil || stage == out {
		return
	}
	for _, c := range stage.oks {
		closure.Apply(c, out)
	}
	stage.flushSaturated()
	for _, c := range stage.errs {
		for i := range c.Len() {
			out.Error(c.Rows[i], c.Times[i], c.Diffs[i])
		}
	}
	stage.Recycle()
}

// MFP is the Closure of a compiled core/expr map–filter–project: each
// chunk of joined rows is evaluated a chunk at a time (E4: no per-row
// interface call, closure call or allocation), kept rows are emitted
// projected, and erred rows become their error code with the row's
// time and diff.
type MFP struct {
	m   *expr.MFP
	ev  *expr.Evaluator
	out expr.Output
}

// NewMFP returns the closure of m, with its own evaluator (an MFP closure
// belongs to one goroutine, like the kernel that applies it).
func NewMFP(m *expr.MFP) *MFP { return &MFP{m: m, ev: m.NewEvaluator()} }

// Arity returns the MFP's output arity.
func (c *MFP) Arity() int { return c.m.OutputArity() }

// Apply implements Closure.
func (c *MFP) Apply(in *dataflow.Chunk, out *Sink) {
	c.out.Reset()
	c.ev.EvalN(in.Rows, in.Len(), &c.out)
	a := c.m.OutputArity()
	for k, i := range c.out.Kept {
		out.Push(c.out.Rows[k*a:k*a+a], in.Times[i], in.Diffs[i])
	}
	for k, i := range c.out.Erred {
		out.Error(int64(c.out.Codes[k]), in.Times[i], in.Diffs[i])
	}
}
