//go:build race

package migratetest

// raceEnabled is true when the race detector is on. The detector slows every store
// write by one to two orders of magnitude, so the stress cases run a smaller load
// under it; CI runs them at full size without it.
const raceEnabled = true
