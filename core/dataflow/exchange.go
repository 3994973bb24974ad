package dataflow

import (
	"fmt"
	"slices"
	"sync"

	"github.com/tracebench/tracebench/core/frontier"
	"github.com/tracebench/tracebench/internal/invariants"
)

// Hub connects the exchanges of one runtime's workers. A dataflow built on
// every worker creates its exchanges in the same order, so (dataflow id,
// incarnation, sequence number) names the same exchange on every worker,
// and never an exchange of a dropped incarnation of the same id that a
// slower worker has not left yet.
type Hub struct {
	peers int
	mu    sync.Mutex
	chans map[exchangeKey]*exchangeChan
}

type exchangeKey struct {
	df  string
	inc uint64
	seq int
}

// NewHub returns the exchange hub of a runtime with peers workers.
func NewHub(peers int) *Hub {
	return &Hub{peers: peers, chans: map[exchangeKey]*exchangeChan{}}
}

// Len returns the number of live exchanges.
func (h *Hub) Len() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.chans)
}

// exchangeChan is one exchange: a mailbox per receiving worker holding the
// chunks sent to it, and every sender's frontier, which every receiver
// reads as their meet. Data and frontiers are written under one lock, so a
// receiver that sees a sender's frontier has also seen everything it sent
// before (D1 across workers).
//
// The senders' frontiers are kept once, not once a receiver, and their meet
// is kept with the number of senders at it: an exchange holds O(W) state
// for W workers, a receiver's step reads the meet in O(1), and a sender's
// advance recomputes it (O(W)) only when it was the last sender at it.
// A receiver is activated only when its mailbox got chunks or the meet
// moved: a sender's advance that leaves the meet where it was changes
// nothing a receiver would do. (With a mailbox's own copy of every
// frontier and every receiver activated by every sender's step, W workers
// cost O(W²) memory an exchange and O(W²) activations a time.)
type exchangeChan struct {
	mu       sync.Mutex
	boxes    []mailbox
	activate []func() // per receiving worker
	refs     int
	senders  []frontier.Frontier // per sending worker; all {0} at first
	meet     frontier.Frontier   // the meet of senders
	atMeet   int                 // the senders whose frontier is meet
}

type mailbox struct {
	chunks []*Chunk
}

func (h *Hub) join(key exchangeKey, worker int, activate func()) *exchangeChan {
	h.mu.Lock()
	defer h.mu.Unlock()
	ch, ok := h.chans[key]
	if !ok {
		ch = &exchangeChan{boxes: make([]mailbox, h.peers), activate: make([]func(), h.peers),
			senders: make([]frontier.Frontier, h.peers), meet: frontier.Min(), atMeet: h.peers}
		h.chans[key] = ch
	}
	ch.mu.Lock()
	ch.activate[worker] = activate
	ch.mu.Unlock()
	ch.refs++
	return ch
}

func (h *Hub) leave(key exchangeKey) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if ch := h.chans[key]; ch != nil {
		ch.refs--
		if ch.refs == 0 {
			delete(h.chans, key)
		}
	}
}

// exchangeSend routes each update to the worker owning its key.
type exchangeSend struct {
	hub    *Hub
	key    exchangeKey
	ch     *exchangeChan
	worker int
	cols   []int
	// byFirst: cols is the first column alone, which an input's share
	// may already be keyed by (Chunk.keyedWorker).
	byFirst bool
	in      *Port[*Chunk]
	dest    []int32  // scratch: the worker of each update of a message
	out     []routed // scratch: the step's non-empty parts and their workers
	acts    []func() // scratch: the receivers to activate after a send
	woke    []bool   // scratch: per worker, in acts already (all false between steps)
	last    frontier.Frontier
	closed  bool
	// stopped is set once a chunk broke the operator contract (admit):
	// the exchange sends nothing more and its receivers' frontier stays
	// where it was, as an arrangement's does.
	stopped bool
	// wide is the columns every chunk must have (an arrangement's
	// collection's), any with wide < 0; where names the refusal (the
	// arrangement half it feeds, or "exchange"): Context.exchange.
	wide  int
	where string
	onErr func(error)
}

func (o *exchangeSend) Step(in frontier.Frontier) frontier.Frontier {
	peers := len(o.ch.boxes)
	msgs := o.in.Take()
	if o.stopped || len(msgs) == 0 && in == o.last {
		return frontier.Empty()
	}
	// Every message is admitted before any is routed: hashing a chunk
	// that breaks the contract (too few columns) would panic, and one at
	// a time its receivers were told had passed would be read as if it
	// had not.
	for _, c := range msgs {
		if err := admit(c, o.in.from, o.wide, o.cols, o.last); err != nil {
			o.stopped = true
			o.onErr(fmt.Errorf("%s: %w", o.where, err))
			return frontier.Empty()
		}
	}
	// Each message is split at once: a hash pass, then every part
	// allocated at its size and filled by index. A message whose updates
	// all go to one worker (every message when there is one worker) goes
	// there whole: chunks are immutable once sent, so it need not be copied.
	o.out = o.out[:0]
	for _, c := range msgs {
		n, ar := c.Len(), c.Arity
		if n == 0 {
			// Whole to this worker, where a reader refuses it if its
			// arity is not its collection's, as it would on one
			// worker; an arrangement's exchange admitted its arity.
			if o.wide < 0 {
				o.out = append(o.out, routed{int32(o.worker), c})
			}
			continue
		}
		if peers == 1 {
			o.out = append(o.out, routed{0, c})
			continue
		}
		if o.byFirst {
			// An input's share says which worker its rows' first
			// column falls to: no row need be hashed again.
			if w := c.keyedWorker(peers); w >= 0 {
				o.out = append(o.out, routed{int32(w), c})
				continue
			}
		}
		o.dest = slices.Grow(o.dest[:0], n)[:n]
		var apart int32 // not 0 once an update goes elsewhere than the first
		if len(o.cols) == 1 {
			// One key column (the common exchange): its own pass, which
			// keeps the hash in registers (BenchmarkRoute).
			apart = workersOf(c.Rows[:n*ar], ar, o.cols[0], o.dest, peers)
		} else {
			first := int32(Worker(HashCols(c.Rows[:ar], o.cols), peers))
			for i := range o.dest {
				w := int32(Worker(HashCols(c.Rows[i*ar:i*ar+ar], o.cols), peers))
				o.dest[i] = w
				apart |= w ^ first
			}
		}
		if apart == 0 {
			o.out = append(o.out, routed{o.dest[0], c})
			continue
		}
		for w, p := range c.split(peers, o.dest) {
			if p.Len() > 0 {
				o.out = append(o.out, routed{int32(w), p})
			}
		}
	}
	o.ch.mu.Lock()
	for _, r := range o.out {
		o.ch.boxes[r.w].chunks = append(o.ch.boxes[r.w].chunks, r.c)
	}
	acts := o.acts[:0]
	if o.ch.advance(o.worker, in) {
		// The meet moved: every receiver's frontier moves.
		for w, a := range o.ch.activate {
			if a != nil && w != o.worker {
				acts = append(acts, a)
			}
		}
	} else if len(o.out) > 0 {
		// The receivers that got chunks, once each.
		if o.woke == nil {
			o.woke = make([]bool, peers)
		}
		for _, r := range o.out {
			if w := int(r.w); w != o.worker && !o.woke[w] {
				o.woke[w] = true
				if a := o.ch.activate[w]; a != nil {
					acts = append(acts, a)
				}
			}
		}
		for _, r := range o.out {
			o.woke[r.w] = false
		}
	}
	o.ch.mu.Unlock()
	clear(o.out)
	o.last = in
	for _, a := range acts {
		a()
	}
	clear(acts)
	o.acts = acts[:0]
	return frontier.Empty()
}

// advance sets sending worker w's frontier to f, under ch.mu, and reports
// whether the meet of the senders' frontiers moved. A sender's frontier
// only advances (its operator's output frontier, held by the dataflow
// where a capability would take it back), so the meet moves only when the
// last sender at it leaves it, and is found again then.
func (ch *exchangeChan) advance(w int, f frontier.Frontier) bool {
	old := ch.senders[w]
	if f == old {
		return false
	}
	if invariants.Enabled {
		invariants.Assertf(old.LessEqual(f), "exchange: sender %d's frontier went back from %v to %v", w, old, f)
	}
	ch.senders[w] = f
	if old != ch.meet {
		return false // beyond the meet already
	}
	if ch.atMeet--; ch.atMeet > 0 {
		return false
	}
	m, n := frontier.Empty(), 0
	for _, s := range ch.senders {
		switch {
		case s == m:
			n++
		case s.LessEqual(m):
			m, n = s, 1
		}
	}
	ch.meet, ch.atMeet = m, n
	return true
}

// routed is one part of a message and the worker it goes to.
type routed struct {
	w int32
	c *Chunk
}

func (o *exchangeSend) Shutdown() {
	if o.closed {
		return
	}
	o.closed = true
	o.ch.mu.Lock()
	var acts []func()
	if o.ch.advance(o.worker, frontier.Empty()) {
		// The meet moved: every receiver's frontier moves (this
		// worker's too: its dataflow may be stepped no more, or may).
		acts = append(acts, o.ch.activate...)
	}
	o.ch.activate[o.worker] = nil
	o.ch.mu.Unlock()
	for _, a := range acts {
		if a != nil {
			a()
		}
	}
	o.hub.leave(o.key)
}

// exchangeRecv is the receiving side on one worker: a source whose
// capability is the meet of the senders' frontiers.
type exchangeRecv struct {
	ch     *exchangeChan
	worker int
	out    *Stream[*Chunk]
}

func (o *exchangeRecv) Step(frontier.Frontier) frontier.Frontier {
	o.ch.mu.Lock()
	box := &o.ch.boxes[o.worker]
	chunks := box.chunks
	box.chunks = nil
	f := o.ch.meet
	o.ch.mu.Unlock()
	for _, c := range chunks {
		o.out.Send(c)
	}
	return f
}

func (o *exchangeRecv) Shutdown() {}

// exchangeCheck stands for an exchange where no update would move (one
// worker) and the build does not know the stream's columns: it admits
// every chunk as exchangeSend does, with the same error, and forwards it,
// so one worker refuses what several do (Context.ExchangeNamed). Refused,
// it forwards nothing more and holds its frontier where it was, as
// several workers' receivers are held.
type exchangeCheck struct {
	in      *Port[*Chunk]
	out     *Stream[*Chunk]
	cols    []int
	last    frontier.Frontier
	stopped bool
	onErr   func(error)
}

func (o *exchangeCheck) Step(in frontier.Frontier) frontier.Frontier {
	msgs := o.in.Take()
	if o.stopped {
		return o.last
	}
	for _, c := range msgs {
		if err := admit(c, o.in.from, -1, o.cols, o.last); err != nil {
			o.stopped = true
			o.onErr(fmt.Errorf("exchange: %w", err))
			return o.last
		}
	}
	for _, c := range msgs {
		o.out.Send(c)
	}
	o.last = in
	return frontier.Empty()
}

func (o *exchangeCheck) Shutdown() {}
