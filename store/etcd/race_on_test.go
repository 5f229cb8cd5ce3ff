//go:build race

package etcd_test

// raceEnabled is true when the race detector is on: the multi-instance tests then
// run a smaller load.
const raceEnabled = true
