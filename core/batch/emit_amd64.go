package batch

// emitHasFast: emitRangeFast is the assembly loop of emit_amd64.s.
const emitHasFast = true

// emitRangeFast runs emitRange's loop on f for records that have one
// before them (emit_amd64.s).
//
//go:noescape
func emitRangeFast(f *sealEmit)
