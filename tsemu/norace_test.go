//go:build !race

package tsemu

const raceEnabled = false
