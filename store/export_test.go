package store

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"reflect"
	"sync"
	"testing"

	"github.com/management-service/mgmt/resource"
)

// TestMain runs the package's tests, in which every write checks that what it hands
// to the cache and the tracker is exactly the stored object (see resultChecker), and
// fails them when one was not.
func TestMain(m *testing.M) {
	flag.Parse()
	code := m.Run()
	if n := len(resultProblems()); n > 0 {
		fmt.Fprintf(os.Stderr, "%d writes remembered an object other than the stored one; the first: %s\n", n, resultProblems()[0])
		code = 1
	}
	os.Exit(code)
}

var (
	problemsMu sync.Mutex
	problems   []string
)

func resultProblems() []string {
	problemsMu.Lock()
	defer problemsMu.Unlock()
	return append([]string(nil), problems...)
}

// checkingResults makes *Store a resultChecker in the store's tests: every store
// checks what it remembers, except in benchmarks, which measure the store without.
func (s *Store) checkingResults() bool {
	f := flag.Lookup("test.bench")
	return f == nil || f.Value.String() == ""
}

// checkResult decodes data the way reads do and compares.
func (s *Store) checkResult(k *resource.KindInfo, key string, data []byte, stored resource.Object) {
	fail := func(format string, args ...any) {
		problemsMu.Lock()
		problems = append(problems, key+": "+fmt.Sprintf(format, args...))
		problemsMu.Unlock()
	}
	decoded := k.New()
	if err := json.Unmarshal(data, decoded); err != nil {
		fail("stored bytes do not decode: %v", err)
		return
	}
	tm := decoded.GetTypeMeta()
	tm.Kind, tm.APIVersion = k.Kind, k.APIVersion()
	if !reflect.DeepEqual(decoded, stored) {
		fail("remembered %#v, stored %#v", stored, decoded)
	}
	// The stored bytes are json.Marshal's, whatever way the write made them.
	if want, err := json.Marshal(stored); err != nil || string(want) != string(data) {
		fail("stored %s, json.Marshal writes %s (%v)", data, want, err)
	}
	if want, got := s.infoOf(key, data), summarize(k, key, stored.GetObjectMeta()); !reflect.DeepEqual(want, got) {
		fail("summary %#v, decoded summary %#v", got, want)
	}
}

// ResultProblems lists the writes that remembered an object other than the stored
// one so far.
func ResultProblems() []string { return resultProblems() }
