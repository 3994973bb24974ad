//go:build race

package runtime

// raceEnabled reports a -race build: the soak runs fewer steps there.
const raceEnabled = true
