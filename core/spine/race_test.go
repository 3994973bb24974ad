//go:build race

package spine

// raceEnabled: the race detector slows the state machine's steady runs
// about fourfold, and they try one spine a check instead of three.
const raceEnabled = true
