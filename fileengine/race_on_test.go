//go:build race

package fileengine

// raceEnabled says the race detector is on: allocation figures then
// differ (its sync.Pool drops what it holds at random), and the
// allocation tests skip.
const raceEnabled = true
