// Package migratetest is the reliability suite of package migrate, for every store
// backend: the REL-MIG-* cases and the crash test REL-CRASH-KILL9-MIGRATION of the
// project's reliability checklist (reliability-security §4.4), and the helpers the
// migration tests share. Package migrate runs it on memdb and badger; a backend in
// a module of its own (store/etcd) runs it from its tests too.
//
// # The in-process suite
//
// [RunReliability] runs REL-MIG-CONFLICT, REL-MIG-ATOMIC and REL-MIG-IDEMPOTENT, each
// a subtest named after its id, on a fresh store over a fresh backend per case:
//
//	func TestMigrate(t *testing.T) {
//		migratetest.RunReliability(t, func(t *testing.T) backend.Backend {
//			b := memdb.New(memdb.Options{})
//			t.Cleanup(func() { _ = b.Close() })
//			return b
//		})
//	}
//
// so that `go test -run 'TestMigrate$/REL-'` runs the suite alone. Each case logs a
// line starting with "RESULT". Under the race detector the stress cases run a
// smaller load.
//
// # The crash test
//
// [RunKill9] kills a child process that migrates in a loop, again and again, and
// checks the durable state after each kill. The child is the test binary run again
// with -test.run selecting the calling test, so the test that calls RunKill9 is
// also the child's entry point; a [Kill9Config] says how both processes reach the
// state: a string the parent prepares (a directory, or a server's endpoint and a
// key prefix) and the functions that open a backend from it.
//
//	func TestKill9Migration(t *testing.T) {
//		migratetest.RunKill9(t, migratetest.Kill9Config{ // Setup: nil, a fresh directory
//			OpenChild: func(dir string) (backend.Backend, error) { return badger.Open(dir, badger.Options{}) },
//		})
//	}
//
// For a backend that is a client of a server, Setup starts the server in the parent
// (it outlives every child) and returns its endpoint and a prefix; OpenChild
// connects to it; Quiet gives the server time to apply what a dead child sent.
//
// # The project rules
//
// [RunProjectRules] runs the suite of the project rules of package migrate (issue
// 20), one subtest per rule named after it ("rule 1: …"), races included, on a
// store with the rules installed and started ([NewRulesEnv]).
// [RunKill9ProjectDeletion] kills, with SIGKILL, a child host in the middle of a
// project's deletion and checks that the restarted host finishes it, leaves
// nothing behind and touches nothing else; it takes the same [Kill9Config].
//
// # Helpers
//
// [Env] is a store with a migrate.Service and the seed most cases start from
// (projects a and b, the instance p-a/dev), built by [NewEnv] over a store from
// [NewStore]; [Instance], [Request] and [Admin] build what the cases pass.
//
// The package imports "testing" and testify: import it from tests only.
package migratetest
