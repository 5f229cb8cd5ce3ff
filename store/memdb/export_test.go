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
