package memdb

// LiveWatchers returns the number of watcher goroutines still running.
func LiveWatchers(b *Backend) int { return b.hub.Live() }

// KeptRevisions returns the number of past revisions whose snapshot is kept.
func KeptRevisions(b *Backend) int {
	b.mu.RLock()
	defer b.mu.RUnlock()
	n := 0
	for _, r := range b.ring {
		if r.snap != nil {
			n++
		}
	}
	return n
}

// HistoryBytes returns the bytes charged to the kept revisions, and their sum
// recounted from the ring.
func HistoryBytes(b *Backend) (charged, recounted int64) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	for _, r := range b.ring {
		recounted += r.bytes
	}
	return b.histBytes, recounted
}
