package runtime

import (
	"context"
	"errors"
	"fmt"
	"slices"
	gosync "sync"

	"github.com/tracebench/tracebench/core/dataflow"
	"github.com/tracebench/tracebench/core/share"
	"github.com/tracebench/tracebench/core/spine"
)

// Role is what a runtime renders and whether it publishes.
type Role int

const (
	// Solo maintains and reads, publishing nothing.
	Solo Role = iota
	// Maintenance maintains every index and publishes it.
	Maintenance
	// Interactive renders queries that read published indexes.
	Interactive
)

func (r Role) String() string {
	switch r {
	case Solo:
		return "solo"
	case Maintenance:
		return "maintenance"
	case Interactive:
		return "interactive"
	}
	return fmt.Sprintf("Role(%d)", int(r))
}

// covers reports whether the role renders desc.
func (r Role) covers(desc dataflow.Desc) bool {
	switch r {
	case Maintenance:
		return desc.Maintained
	case Interactive:
		return !desc.Maintained
	}
	return true
}

// Options configure a runtime.
type Options struct {
	Role    Role
	Workers int // W ≥ 1
	// Registries has one sharing registry per worker (worker i of the
	// Interactive runtime reads worker i of the Maintenance runtime through
	// Registries[i]); required for Maintenance and Interactive.
	Registries []*share.Registry
	Spine      spine.Options
	// Effort is the merge work each local index may do per worker wake
	// (maintenance); 0 means 1<<14.
	Effort int64
	// Paused starts the runtime with its workers holding every command
	// until Resume: a runtime that is behind, for tests of command races.
	Paused bool
}

// Runtime is a set of workers in one role.
type Runtime struct {
	opts    Options
	hub     *dataflow.Hub
	workers []*worker
	stop    chan struct{}
	resume  chan struct{} // closed when not paused
	wg      gosync.WaitGroup

	errMu gosync.Mutex
	errs  []error
}

// New starts a runtime's workers.
func New(opts Options) (*Runtime, error) {
	if opts.Workers < 1 {
		return nil, fmt.Errorf("runtime: %d workers: need at least one", opts.Workers)
	}
	if opts.Role != Solo && len(opts.Registries) != opts.Workers {
		return nil, fmt.Errorf("runtime: %v runtime with %d workers needs %d registries, has %d", opts.Role, opts.Workers, opts.Workers, len(opts.Registries))
	}
	if opts.Effort == 0 {
		opts.Effort = 1 << 14
	}
	r := &Runtime{opts: opts, hub: dataflow.NewHub(opts.Workers), stop: make(chan struct{}), resume: make(chan struct{})}
	if !opts.Paused {
		close(r.resume)
	}
	for i := range opts.Workers {
		r.workers = append(r.workers, newWorker(r, i))
	}
	for _, w := range r.workers {
		r.wg.Add(1)
		go w.run()
	}
	return r, nil
}

// Resume lets a runtime started Paused apply its commands.
func (r *Runtime) Resume() {
	select {
	case <-r.resume:
	default:
		close(r.resume)
	}
}

// Role returns the runtime's role.
func (r *Runtime) Role() Role { return r.opts.Role }

// Workers returns the number of workers.
func (r *Runtime) Workers() int { return r.opts.Workers }

// send appends cmd to every worker's queue.
func (r *Runtime) send(cmd Command) {
	for _, w := range r.workers {
		w.enqueue(cmd)
	}
}

// fail records an error a worker met.
func (r *Runtime) fail(err error) {
	r.errMu.Lock()
	r.errs = append(r.errs, err)
	r.errMu.Unlock()
}

// Err returns the errors workers met so far, joined.
func (r *Runtime) Err() error {
	r.errMu.Lock()
	defer r.errMu.Unlock()
	return errors.Join(r.errs...)
}

// Shutdown drops every dataflow and index on every worker (releasing every
// hold, R2) and stops the workers. It waits for them to exit.
func (r *Runtime) Shutdown() {
	select {
	case <-r.stop:
		return
	default:
	}
	close(r.stop)
	r.wg.Wait()
}

// Stats describe a runtime's state, summed over its workers.
type Stats struct {
	Dataflows int
	Indexes   int // trace manager entries (local and peer)
	Traces    int // arrangement traces under maintenance
	Exchanges int
}

// Stats returns the runtime's state; it asks every worker through its
// command queue, so it reflects every command sent before it.
func (r *Runtime) Stats(ctx context.Context) (Stats, error) {
	var mu gosync.Mutex
	var st Stats
	err := r.barrier(ctx, func(w *worker) {
		mu.Lock()
		st.Dataflows += len(w.dataflows)
		st.Indexes += w.env.Manager.Len()
		st.Traces += w.env.Manager.Tracked()
		mu.Unlock()
	})
	st.Exchanges = r.hub.Len()
	return st, err
}

// barrier runs f on every worker after everything sent before it has been
// applied and stepped, and waits for all of them.
func (r *Runtime) barrier(ctx context.Context, f func(*worker)) error {
	var wg gosync.WaitGroup
	for _, w := range r.workers {
		wg.Add(1)
		w.enqueue(barrier{done: func() {
			if f != nil {
				f(w)
			}
			wg.Done()
		}})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("runtime: %v barrier: %w", r.opts.Role, ctx.Err())
	case <-r.stop:
		return fmt.Errorf("runtime: %v is shut down", r.opts.Role)
	}
}

// Controller sends every command to every runtime in the same order.
type Controller struct {
	mu  gosync.Mutex
	rts []*Runtime
}

// NewController returns a controller over runtimes. Runtimes that share
// registries must run the same number of workers and the same hash (§4.6);
// NewController checks it.
func NewController(rts ...*Runtime) (*Controller, error) {
	for _, a := range rts {
		for _, b := range rts {
			if a == b || a.opts.Role == Solo || b.opts.Role == Solo {
				continue
			}
			if a.opts.Workers != b.opts.Workers {
				return nil, fmt.Errorf("runtime: %v runtime has %d workers, %v runtime %d: worker i reads worker i, so they must agree", a.opts.Role, a.opts.Workers, b.opts.Role, b.opts.Workers)
			}
			if !slices.Equal(a.opts.Registries, b.opts.Registries) {
				return nil, fmt.Errorf("runtime: %v and %v runtimes do not share their registries", a.opts.Role, b.opts.Role)
			}
		}
	}
	return &Controller{rts: rts}, nil
}

// Send sends cmd to every runtime (R1). Input updates and frontier advances
// go only to the runtimes that maintain (Solo, Maintenance): an Interactive
// runtime has no use for them, and waking it for each would cost every round
// a context switch on a busy machine.
func (c *Controller) Send(cmd Command) {
	c.mu.Lock()
	defer c.mu.Unlock()
	input := false
	switch cmd.(type) {
	case Input, AdvanceInput:
		input = true
	}
	for _, r := range c.rts {
		if input && r.opts.Role == Interactive {
			continue
		}
		r.send(cmd)
	}
}

// Sync waits until every runtime has applied every command sent before it.
func (c *Controller) Sync(ctx context.Context) error {
	for _, r := range c.rts {
		if err := r.barrier(ctx, nil); err != nil {
			return err
		}
	}
	return nil
}

// Err returns the errors of every runtime, joined.
func (c *Controller) Err() error {
	var errs []error
	for _, r := range c.rts {
		errs = append(errs, r.Err())
	}
	return errors.Join(errs...)
}

// Shutdown shuts every runtime down.
func (c *Controller) Shutdown() {
	for _, r := range c.rts {
		r.Shutdown()
	}
}

// Pair starts a Maintenance and an Interactive runtime of w workers sharing
// one registry per worker pair, and a controller over both.
func Pair(w int, sp spine.Options) (maint, inter *Runtime, ctl *Controller, err error) {
	regs := make([]*share.Registry, w)
	for i := range regs {
		regs[i] = share.NewRegistry()
	}
	maint, err = New(Options{Role: Maintenance, Workers: w, Registries: regs, Spine: sp})
	if err != nil {
		return nil, nil, nil, err
	}
	inter, err = New(Options{Role: Interactive, Workers: w, Registries: regs, Spine: sp})
	if err != nil {
		maint.Shutdown()
		return nil, nil, nil, err
	}
	ctl, err = NewController(maint, inter)
	if err != nil {
		maint.Shutdown()
		inter.Shutdown()
		return nil, nil, nil, err
	}
	return maint, inter, ctl, nil
}
