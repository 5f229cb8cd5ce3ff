package store

// CacheStats returns how many objects the store's decoded-object cache holds and
// the sum of their charges.
func (s *Store) CacheStats() (objects int, bytes int64) {
	return s.cache.Len(), s.cache.Bytes()
}
