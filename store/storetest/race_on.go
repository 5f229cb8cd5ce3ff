//go:build race

package storetest

// raceEnabled is true when the race detector is on. The detector slows a store write
// by one to two orders of magnitude, so the stress cases run a smaller load under it;
// CI runs them at full size without the detector as well.
const raceEnabled = true
