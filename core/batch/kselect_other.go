//go:build !amd64

package batch

// kwHasFast: no assembly loop on this architecture; selectBlock runs every
// update in Go.
const kwHasFast = false

// selectFast does nothing here: selectBlock's Go loop does the work.
func selectFast(f *kwFast) {}

// emitFast does nothing here: emit's Go loop does the work.
func emitFast(f *kwEmit) {}
