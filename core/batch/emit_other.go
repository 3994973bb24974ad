//go:build !amd64

package batch

// emitHasFast: no assembly loop on this architecture; emitRange runs
// every record in Go.
const emitHasFast = false

// emitRangeFast does nothing here: emitRange's Go loop does the work.
func emitRangeFast(f *sealEmit) {}
