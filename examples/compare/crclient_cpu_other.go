//go:build !linux

package main

import "time"

// threadCPUTime is not known on this system: the -crclient table then has no CPU
// columns.
func threadCPUTime() (time.Duration, bool) { return 0, false }
