package badger

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	dgbadger "github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/options"
	"github.com/dgraph-io/badger/v4/table"
	"github.com/dgraph-io/ristretto/v2/z"
)

// checkTables opens every table that dir's MANIFEST lists with badger's table
// reader, and returns ErrCorrupt, naming the file, for one that does not open.
// Badger itself opens its tables in goroutines that panic on a truncated table,
// which would crash the host process instead of failing Open; the check turns that
// into an error. Tables the MANIFEST does not list (left by a crash in the middle of
// a flush) are badger's to remove.
func checkTables(dir string, bo dgbadger.Options) error {
	f, err := os.Open(filepath.Join(dir, dgbadger.ManifestFilename))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("badger: open %s: %w", dir, err)
	}
	m, _, err := dgbadger.ReplayManifestFile(f, bo.ExternalMagicVersion, bo)
	_ = f.Close()
	if err != nil {
		// Badger rewrites its MANIFEST into a new file that it renames into place: a
		// crash cannot leave a damaged header, nor a damaged entry but the last one
		// (which badger drops).
		return fmt.Errorf("%w: %s does not decode: %v", ErrCorrupt, filepath.Join(dir, dgbadger.ManifestFilename), err)
	}
	for id, tm := range m.Tables {
		if tm.KeyID != 0 {
			continue // encrypted: not written by this package
		}
		path := table.NewFilename(id, dir)
		if err := checkTable(path, tm.Compression); err != nil {
			return fmt.Errorf("%w: table %s does not open: %v", ErrCorrupt, path, err)
		}
	}
	return nil
}

// checkTable opens one table read-only and closes it, recovering from a panic of
// badger's reader.
func checkTable(path string, c options.CompressionType) (err error) {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if fi.Size() == 0 {
		return errors.New("empty file")
	}
	mf, err := z.OpenMmapFile(path, os.O_RDONLY, 0)
	if err != nil {
		return err
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
		_ = mf.Close(-1) // Close unmaps; it never deletes the file
	}()
	_, err = table.OpenTable(mf, table.Options{
		ReadOnly:    true,
		ChkMode:     options.NoVerification, // the index checksum is always verified
		BlockSize:   tableBlockSize,
		Compression: c,
	})
	return err
}

// readMark returns the revision recorded in dir's markFile, 0 when there is none.
func readMark(dir string) (int64, error) {
	data, err := os.ReadFile(filepath.Join(dir, markFile))
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("badger: open %s: %w", dir, err)
	}
	rev, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
	if err != nil || rev < 0 {
		return 0, fmt.Errorf("%w: %s holds %q", ErrCorrupt, filepath.Join(dir, markFile), data)
	}
	return rev, nil
}

// writeMark records rev in dir's markFile, atomically and durably: a temporary
// file, synced, renamed over the old one, and the directory synced.
func writeMark(dir string, rev int64) error {
	tmp := filepath.Join(dir, markFile+".tmp")
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	_, err = f.WriteString(strconv.FormatInt(rev, 10) + "\n")
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, filepath.Join(dir, markFile))
	}
	if err == nil {
		err = syncDir(dir)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("record durable revision: %w", err)
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
