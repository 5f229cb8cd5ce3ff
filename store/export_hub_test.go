package store

// SetHubFallback makes s call f whenever one of its watches leaves the watch hub to
// go on with a backend watch of its own, with how many events of its current
// revision the watch had looked at. Call it before s's first watch.
func SetHubFallback(s *Store, f func(skip int)) { s.hubFallback = f }

// DisableHub makes every watch of s follow the backend with a watch of its own, as a
// reference for the hub's. Call it before s's first watch.
func DisableHub(s *Store) {
	s.hubMu.Lock()
	s.hubClosed = true
	s.hubMu.Unlock()
}
