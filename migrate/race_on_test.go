//go:build race

package migrate_test

// raceEnabled is true when the race detector is on. The detector slows every store
// write by one to two orders of magnitude, so the stress cases run a smaller load
// under it; run them at full size without it (go test -run 'REL-' ./migrate/).
const raceEnabled = true
