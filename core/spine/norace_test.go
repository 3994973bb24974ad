//go:build !race

package spine

const raceEnabled = false
