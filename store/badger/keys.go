package badger

import (
	"bytes"
	"encoding/binary"
	"math"

	"github.com/management-service/mgmt/store/backend"
)

// The layout of the badger keyspace (layout 2, recorded under m/layout). Every key of
// the backend lives under one of four one-byte-plus-slash prefixes; badger orders keys
// by their bytes.
//
//	c/<key>                       the current version of a key that exists: where it
//	                              is, not what it holds: uvarint createRev, uvarint
//	                              modRev
//	h/<esc(key)> 0x00 0x01 <^rev> the version of a key written at revision rev (a
//	                              big-endian uint64, inverted so that the newest comes
//	                              first): one flag byte (put or tombstone), uvarint
//	                              createRev, value. Every version, the current one
//	                              included, is written here once, when it is made, and
//	                              stays until a compaction no longer needs it.
//	e/<rev>                       the events of revision rev (big-endian uint64): what a
//	                              watch replays. Values are not repeated there: they are
//	                              read from h/.
//	m/rev, m/compact, m/layout    the current revision, the compaction point and the
//	                              layout of the keyspace.
//
// esc escapes 0x00 as 0x00 0xff and ends with 0x00 0x01: the encoding keeps the byte
// order of keys and no encoded key is a prefix of another, so the versions of one key
// are contiguous and sorted newest first, and the keys sort as the keys themselves.
//
// A write stores its value once: an update adds a version to h/ and repoints c/,
// without copying the version it replaces (layout 1 kept the value in c/ and moved
// the replaced version to h/, writing twice the bytes, and a synced commit's time
// grows with its bytes).
//
// One revision's writes to c/, h/, e/ and m/rev go into one badger transaction (and
// a batch of revisions into the same one), so the data, the history, the event log
// and the revision always agree.
var (
	prefixCurrent = []byte("c/")
	prefixHistory = []byte("h/")
	prefixEvents  = []byte("e/")
	keyRevision   = []byte("m/rev")
	keyCompact    = []byte("m/compact")
	keyLayout     = []byte("m/layout")
)

// layout is the version of the keyspace layout this package reads and writes.
const layout = 2

func currentKey(key string) []byte {
	k := make([]byte, 0, len(prefixCurrent)+len(key))
	k = append(k, prefixCurrent...)
	return append(k, key...)
}

// appendEscaped appends the escaped bytes of key, without the terminator.
func appendEscaped(dst []byte, key string) []byte {
	for i := 0; i < len(key); i++ {
		c := key[i]
		dst = append(dst, c)
		if c == 0 {
			dst = append(dst, 0xff)
		}
	}
	return dst
}

// historyKeyPrefix returns h/<esc(key)> 0x00 0x01: the prefix of every version of key.
func historyKeyPrefix(key string) []byte {
	k := make([]byte, 0, len(prefixHistory)+len(key)+2+8)
	k = append(k, prefixHistory...)
	k = appendEscaped(k, key)
	return append(k, 0, 1)
}

// historyScanPrefix returns h/<esc(prefix)>: the prefix of every version of every key
// that starts with prefix.
func historyScanPrefix(prefix string) []byte {
	k := make([]byte, 0, len(prefixHistory)+len(prefix)+2)
	k = append(k, prefixHistory...)
	return appendEscaped(k, prefix)
}

// historyKey returns the key of key's version at rev.
func historyKey(key string, rev int64) []byte {
	k := historyKeyPrefix(key)
	return binary.BigEndian.AppendUint64(k, math.MaxUint64-uint64(rev))
}

// appendHistoryKey appends the key of key's version at rev to dst.
func appendHistoryKey(dst []byte, key string, rev int64) []byte {
	dst = append(dst, prefixHistory...)
	dst = appendEscaped(dst, key)
	dst = append(dst, 0, 1)
	return binary.BigEndian.AppendUint64(dst, math.MaxUint64-uint64(rev))
}

// historyNextKey returns the smallest history key after every version of key.
func historyNextKey(key string) []byte {
	k := historyKeyPrefix(key)
	return append(k, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff)
}

// parseHistoryKey returns the key and the revision of a history key.
func parseHistoryKey(k []byte) (string, int64, error) {
	if !bytes.HasPrefix(k, prefixHistory) || len(k) < len(prefixHistory)+2+8 {
		return "", 0, ErrCorrupt
	}
	body := k[len(prefixHistory) : len(k)-8]
	rev := int64(math.MaxUint64 - binary.BigEndian.Uint64(k[len(k)-8:]))
	key := make([]byte, 0, len(body))
	for i := 0; i < len(body); i++ {
		c := body[i]
		if c != 0 {
			key = append(key, c)
			continue
		}
		if i+1 >= len(body) {
			return "", 0, ErrCorrupt
		}
		switch body[i+1] {
		case 0xff:
			key = append(key, 0)
			i++
		case 0x01:
			if i+2 != len(body) {
				return "", 0, ErrCorrupt
			}
			return string(key), rev, nil
		default:
			return "", 0, ErrCorrupt
		}
	}
	return "", 0, ErrCorrupt
}

func eventKey(rev int64) []byte {
	k := make([]byte, 0, len(prefixEvents)+8)
	k = append(k, prefixEvents...)
	return binary.BigEndian.AppendUint64(k, uint64(rev))
}

func parseEventKey(k []byte) (int64, error) {
	if len(k) != len(prefixEvents)+8 || !bytes.HasPrefix(k, prefixEvents) {
		return 0, ErrCorrupt
	}
	return int64(binary.BigEndian.Uint64(k[len(prefixEvents):])), nil
}

func encodeInt(v int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(v)) }

func decodeInt(b []byte) (int64, error) {
	if len(b) != 8 {
		return 0, ErrCorrupt
	}
	return int64(binary.BigEndian.Uint64(b)), nil
}

// version is one version of a key: what c/ points to (without its value until it
// is loaded from h/) and what h/ holds.
type version struct {
	createRev int64
	modRev    int64
	value     []byte
	tombstone bool // only in h/: the key was deleted at modRev
}

func (v *version) kv(key string) backend.KV {
	return backend.KV{Key: key, Value: v.value, CreateRevision: v.createRev, ModRevision: v.modRev}
}

// encodeCurrent encodes a c/ record: where the current version of a key is.
func encodeCurrent(createRev, modRev int64) []byte {
	b := make([]byte, 0, 2*binary.MaxVarintLen64)
	b = binary.AppendUvarint(b, uint64(createRev))
	return binary.AppendUvarint(b, uint64(modRev))
}

// decodeCurrent decodes a c/ record; the version it returns has no value.
func decodeCurrent(b []byte) (version, error) {
	create, n := binary.Uvarint(b)
	if n <= 0 {
		return version{}, ErrCorrupt
	}
	b = b[n:]
	mod, n := binary.Uvarint(b)
	if n <= 0 || n != len(b) || mod < create || create == 0 {
		return version{}, ErrCorrupt
	}
	return version{createRev: int64(create), modRev: int64(mod)}, nil
}

const (
	historyPut       = 0
	historyTombstone = 1
)

func encodeHistory(createRev int64, value []byte, tombstone bool) []byte {
	b := make([]byte, 0, 1+binary.MaxVarintLen64+len(value))
	if tombstone {
		return append(b, historyTombstone)
	}
	b = append(b, historyPut)
	b = binary.AppendUvarint(b, uint64(createRev))
	return append(b, value...)
}

func decodeHistory(b []byte, modRev int64, copyValue bool) (version, error) {
	if len(b) == 0 {
		return version{}, ErrCorrupt
	}
	switch b[0] {
	case historyTombstone:
		return version{modRev: modRev, tombstone: true}, nil
	case historyPut:
	default:
		return version{}, ErrCorrupt
	}
	create, n := binary.Uvarint(b[1:])
	if n <= 0 {
		return version{}, ErrCorrupt
	}
	v := b[1+n:]
	if copyValue {
		v = append([]byte{}, v...)
	}
	return version{createRev: int64(create), modRev: modRev, value: v}, nil
}

// eventRecord is one event as the event log stores it: no values, which live in c/
// and h/ at (key, revision) and (key, prevModRev).
type eventRecord struct {
	typ           backend.EventType
	key           string
	createRev     int64 // of the put; 0 for a delete
	prevModRev    int64 // 0 when the key did not exist before
	prevCreateRev int64
}

func encodeEvents(evs []eventRecord) []byte {
	size := binary.MaxVarintLen64
	for _, e := range evs {
		size += 1 + 4*binary.MaxVarintLen64 + len(e.key)
	}
	b := make([]byte, 0, size)
	b = binary.AppendUvarint(b, uint64(len(evs)))
	for _, e := range evs {
		b = append(b, byte(e.typ))
		b = binary.AppendUvarint(b, uint64(len(e.key)))
		b = append(b, e.key...)
		b = binary.AppendUvarint(b, uint64(e.createRev))
		b = binary.AppendUvarint(b, uint64(e.prevModRev))
		b = binary.AppendUvarint(b, uint64(e.prevCreateRev))
	}
	return b
}

func decodeEvents(b []byte) ([]eventRecord, error) {
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)) {
		return nil, ErrCorrupt
	}
	b = b[k:]
	evs := make([]eventRecord, 0, n)
	for range n {
		if len(b) == 0 {
			return nil, ErrCorrupt
		}
		e := eventRecord{typ: backend.EventType(b[0])}
		if e.typ != backend.EventPut && e.typ != backend.EventDelete {
			return nil, ErrCorrupt
		}
		b = b[1:]
		l, k := binary.Uvarint(b)
		if k <= 0 || uint64(len(b)-k) < l {
			return nil, ErrCorrupt
		}
		e.key = string(b[k : k+int(l)])
		b = b[k+int(l):]
		var vals [3]uint64
		for i := range vals {
			v, k := binary.Uvarint(b)
			if k <= 0 {
				return nil, ErrCorrupt
			}
			vals[i] = v
			b = b[k:]
		}
		e.createRev, e.prevModRev, e.prevCreateRev = int64(vals[0]), int64(vals[1]), int64(vals[2])
		evs = append(evs, e)
	}
	if len(b) != 0 {
		return nil, ErrCorrupt
	}
	return evs, nil
}
