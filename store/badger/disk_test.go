package badger

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	dgbadger "github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/options"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/store/backend"
)

// similarValue is a ~1.3 KB JSON object that shares most of its bytes with those of
// other i, as the objects of one kind do.
func similarValue(i int) []byte {
	return fmt.Appendf(nil, `{"kind":"VirtualClusterInstance","apiVersion":"management.service/v1",`+
		`"metadata":{"name":"obj-%06d","namespace":"p-ns%03d","uid":"%08x-9ba9-45ba-8864-%012x",`+
		`"labels":{"app":"bench","team":"team-%d"},"annotations":{"description":"%s"},`+
		`"managedFields":[{"manager":"unknown","operation":"Update","fieldsV1":{"f:metadata":{"f:labels":{".":{},"f:app":{},"f:team":{}}},`+
		`"f:spec":{".":{},"f:description":{},"f:displayName":{}}}}]},"spec":{"displayName":"Instance %d","description":"%s"}}`,
		i, i%100, i*2654435761, i*40503, i%10, strings.Repeat("x", 400), i, strings.Repeat("d", 200))
}

// tableCompressions returns the compression of every table dir's MANIFEST lists.
func tableCompressions(t *testing.T, dir string) []options.CompressionType {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, dgbadger.ManifestFilename))
	require.NoError(t, err)
	defer f.Close()
	m, _, err := dgbadger.ReplayManifestFile(f, 0, dgbadger.DefaultOptions(dir))
	require.NoError(t, err)
	var out []options.CompressionType
	for _, tm := range m.Tables {
		out = append(out, tm.Compression)
	}
	return out
}

// tableBytes returns the bytes of dir's tables (the other files are of fixed size:
// badger preallocates its discard statistics).
func tableBytes(t *testing.T, dir string) int64 {
	t.Helper()
	var n int64
	require.NoError(t, filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(d.Name()) != ".sst" {
			return err
		}
		info, err := d.Info()
		if err == nil {
			n += info.Size()
		}
		return err
	}))
	return n
}

// The tables are zstd-compressed in blocks large enough to hold several values:
// similar values then take a fraction of their bytes on disk (badger's defaults,
// snappy in 4 KiB blocks, keep about a third of them, history and events included).
func TestDisk_TablesAreCompactlyCompressed(t *testing.T) {
	dir := t.TempDir()
	b, err := Open(dir, Options{NoSync: true})
	require.NoError(t, err)
	const n = 3000
	raw := 0
	for i := range n {
		v := similarValue(i)
		raw += len(v)
		_, err := b.Txn(t.Context(), backend.Txn{Ops: []backend.Op{{Key: fmt.Sprintf("/vci/p-ns%03d/obj-%06d", i%100, i), Value: v}}})
		require.NoError(t, err)
	}
	require.NoError(t, b.Close()) // flushes the memtable into a table

	comps := tableCompressions(t, dir)
	require.NotEmpty(t, comps)
	for _, c := range comps {
		assert.Equal(t, options.ZSTD, c)
	}
	size := tableBytes(t, dir)
	t.Logf("%d values of %d bytes on average: %d bytes of tables, %.1f per value", n, raw/n, size, float64(size)/n)
	assert.Less(t, size, int64(raw/6), "the tables hold more than a sixth of the values' bytes")
}

// Tables record their compression: a directory whose tables were written with
// another one opens, reads and takes writes, and its old tables stay readable beside
// the new ones.
func TestDisk_OpensTablesOfAnotherCompression(t *testing.T) {
	dir := t.TempDir()
	saved := tableCompression
	t.Cleanup(func() { tableCompression = saved })

	tableCompression = options.Snappy
	b, err := Open(dir, Options{NoSync: true})
	require.NoError(t, err)
	key := func(i int) string { return fmt.Sprintf("/k/%04d", i) }
	for i := range 200 {
		_, err := b.Txn(t.Context(), backend.Txn{Ops: []backend.Op{{Key: key(i), Value: similarValue(i)}}})
		require.NoError(t, err)
	}
	require.NoError(t, b.Close())
	assert.Equal(t, []options.CompressionType{options.Snappy}, tableCompressions(t, dir))

	tableCompression = options.ZSTD
	for round := range 2 {
		b, err = Open(dir, Options{NoSync: true})
		require.NoError(t, err, "round %d", round)
		if round == 0 {
			for i := 200; i < 400; i++ {
				_, err := b.Txn(t.Context(), backend.Txn{Ops: []backend.Op{{Key: key(i), Value: similarValue(i)}}})
				require.NoError(t, err)
			}
		}
		for i := range 400 {
			kv, err := b.Get(t.Context(), key(i), 0)
			require.NoError(t, err, "round %d key %d", round, i)
			assert.Equal(t, string(similarValue(i)), string(kv.Value))
			assert.Equal(t, int64(i+1), kv.ModRevision)
		}
		res, err := b.Range(t.Context(), backend.RangeOptions{Prefix: "/k/"})
		require.NoError(t, err)
		assert.Len(t, res.KVs, 400)
		require.NoError(t, b.Close())
	}
	assert.ElementsMatch(t, []options.CompressionType{options.Snappy, options.ZSTD}, tableCompressions(t, dir))
}
