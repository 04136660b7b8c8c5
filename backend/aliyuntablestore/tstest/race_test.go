//go:build race

package tstest

const raceEnabled = true
