package batch

// kwHasFast: selectFast is the assembly loop of kselect_amd64.s.
const kwHasFast = true

// selectFast runs selectBlock's loop on f while its updates need nothing
// but the loop's common path (kselect_amd64.s).
//
//go:noescape
func selectFast(f *kwFast)

// emitFast runs emit's loop on f up to the records' end, or up to a
// record whose diff would overflow the accumulator's (kselect_amd64.s).
//
//go:noescape
func emitFast(f *kwEmit)
