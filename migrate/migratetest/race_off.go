//go:build !race

package migratetest

// raceEnabled is true when the race detector is on; see race_on.go.
const raceEnabled = false
