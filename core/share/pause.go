package share

// pauses are the pause points of the critical sections P1 and P3 make whole,
// and of a publisher's Leave, which ends its placeholders in one,
// set only by this package's tests: each runs at the one place where a
// section split in two would let another goroutine in, so that a test of the
// interleaving is deterministic instead of a stress run hoping to hit the
// window. Unset — always, outside tests — each costs a nil check.
//
// A test sets them before the point or spine is shared, and never changes
// them while another goroutine may read them.
type pauses struct {
	// admitted runs on a Point when an admission's since check has passed
	// and its hold is not yet registered (ReaderAt, Import), with p.mu held:
	// P1's admission is one critical section.
	admitted func()
	// seeded runs on a Point when an importer's seed has been taken from the
	// chain and its replay queue is not yet registered, with p.mu held: P3's
	// seed and queue are taken under one lock.
	seeded func()
	// published runs on a Spine when a new since has been published to its
	// points and not yet applied to the inner spine, with no lock held: P1's
	// publisher publishes a since before it applies it.
	published func()
	// left runs on a Registry in Leave once its lock is released, with no
	// lock held: a publisher's Leave ends the placeholders nobody published
	// before it releases the lock, so a Publish let in here finds them
	// ended.
	left func()
}

// pauseAdmitted runs the admitted pause point, if set. REQUIRES: p.mu held.
func (p *Point) pauseAdmitted() {
	if p.pause != nil && p.pause.admitted != nil {
		p.pause.admitted()
	}
}

// pauseSeeded runs the seeded pause point, if set. REQUIRES: p.mu held.
func (p *Point) pauseSeeded() {
	if p.pause != nil && p.pause.seeded != nil {
		p.pause.seeded()
	}
}

// pausePublished runs the published pause point, if set. No lock held.
func (s *Spine) pausePublished() {
	if s.pause != nil && s.pause.published != nil {
		s.pause.published()
	}
}

// pauseLeft runs the left pause point, if set. No lock held.
func (g *Registry) pauseLeft() {
	if g.pause != nil && g.pause.left != nil {
		g.pause.left()
	}
}
