package batch

import "github.com/tracebench/tracebench/core/frontier"

// Presentation is how an imported batch is read (§3.3, differential-
// dataflow's BatchFrontier): every time is advanced by Since, and a time whose
// advanced value is at or beyond Until is dropped. Keys and vals are
// unchanged. Batches are never copied to present them: readers call Present
// on each time they visit, a max and a compare.
type Presentation struct {
	Since, Until frontier.Frontier
}

// Identity presents every time as it is.
func Identity() Presentation {
	return Presentation{Since: frontier.Min(), Until: frontier.Empty()}
}

// Present returns t advanced by Since and whether it is shown (not at or
// beyond Until).
func (p Presentation) Present(t frontier.Time) (frontier.Time, bool) {
	t = p.Since.AdvanceBy(t)
	return t, !p.Until.Beyond(t)
}

// String formats p as "as_of {s} until {u}".
func (p Presentation) String() string {
	return "as_of " + p.Since.String() + " until " + p.Until.String()
}
