// Package storetest holds the conformance suites every backend runs and the fixture
// users put in their own unit tests.
//
// # Conformance
//
// [RunBackend] checks the byte-and-revision contract of package store/backend;
// [RunStore] checks the metadata semantics of package store over a backend. Each
// runs every case as a subtest on a fresh backend, so no backend can skip one:
//
//	func TestConformance(t *testing.T) {
//		storetest.RunBackend(t, func(t *testing.T) backend.Backend { return memdb.New(memdb.Options{}) })
//		storetest.RunStore(t, func(t *testing.T) backend.Backend { return memdb.New(memdb.Options{}) })
//	}
//
// Cases that need an optional capability (backend.Compactor) are skipped, with the
// reason, on backends without it.
//
// # Fixture
//
// [NewFixture] returns the real store over memdb with a [FakeClock]: production
// behaviour in a unit test, unlike fake clients that skip uid, resourceVersion,
// generation, finalizers or garbage collection. Step the clock to run grace periods
// out; on cleanup the fixture checks the store's invariants ([CheckInvariants]).
//
// This is the only package of the library that imports "testing"; import it from
// tests only.
package storetest
