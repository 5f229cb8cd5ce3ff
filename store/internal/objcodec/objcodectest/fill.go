// Package objcodectest makes the random objects the tests of objcodec and of the
// store compare with encoding/json.
package objcodectest

import (
	"bytes"
	"encoding/json"
	"math/rand"
	"reflect"
	"time"

	"github.com/management-service/mgmt/resource"
)

var (
	timeType       = reflect.TypeFor[resource.Time]()
	rawMessageType = reflect.TypeFor[json.RawMessage]()
)

// Fill sets v (and everything below it) to values chosen to hit what a JSON
// round trip changes: nil, empty and full lists and maps, zero and non-zero times in
// other zones and below the second, pointers to zero times, strings with escapes, and
// now and then something that cannot be encoded or does not survive encoding as is.
func Fill(r *rand.Rand, v reflect.Value, depth int) {
	switch v.Type() {
	case timeType:
		v.Set(reflect.ValueOf(Time(r)))
		return
	case rawMessageType:
		raws := []json.RawMessage{nil, {}, json.RawMessage(`{"f:a":{}}`), json.RawMessage(`{ "a" : 1 }`),
			json.RawMessage(`{"a":"<b>"}`), json.RawMessage(`{"a":"\u003c"}`), json.RawMessage(`null`),
			json.RawMessage(`{`), json.RawMessage("\"\xe2\x80\xa8\""), json.RawMessage(`{"k:{\"a\":1}":{}}`)}
		v.Set(reflect.ValueOf(raws[r.Intn(len(raws))]))
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		if r.Intn(3) == 0 || depth > 6 {
			v.SetZero()
			return
		}
		n := reflect.New(v.Type().Elem())
		Fill(r, n.Elem(), depth+1)
		v.Set(n)
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				Fill(r, v.Field(i), depth+1)
			}
		}
	case reflect.Slice:
		switch r.Intn(4) {
		case 0:
			v.SetZero()
		case 1:
			v.Set(reflect.MakeSlice(v.Type(), 0, r.Intn(2)))
		default:
			n := 1 + r.Intn(3)
			s := reflect.MakeSlice(v.Type(), n, n)
			for i := 0; i < n; i++ {
				Fill(r, s.Index(i), depth+1)
			}
			v.Set(s)
		}
	case reflect.Map:
		switch r.Intn(4) {
		case 0:
			v.SetZero()
		case 1:
			v.Set(reflect.MakeMap(v.Type()))
		default:
			m := reflect.MakeMap(v.Type())
			for i := 0; i < 1+r.Intn(3); i++ {
				k := reflect.New(v.Type().Key()).Elem()
				Fill(r, k, depth+1)
				e := reflect.New(v.Type().Elem()).Elem()
				Fill(r, e, depth+1)
				m.SetMapIndex(k, e)
			}
			v.Set(m)
		}
	case reflect.String:
		strs := []string{"", "a", "web", "x<y>&z", "line\nbreak \"q\"", "\u2028", "é", "🙂"}
		if r.Intn(40) == 0 {
			strs = []string{"\xff", "a\xc3", "\xff\xfe"}
		}
		v.SetString(strs[r.Intn(len(strs))])
	case reflect.Bool:
		v.SetBool(r.Intn(2) == 0)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(r.Int63n(1000) - 500)
	}
}

// Time returns a time chosen to hit what a JSON round trip changes: zero in other
// zones, below the second, at the edges of the years RFC 3339 can write, and beyond.
func Time(r *rand.Rand) resource.Time {
	zone := time.FixedZone("X", -7*3600+1800)
	switch r.Intn(10) {
	case 0:
		return resource.Time{}
	case 1:
		return resource.Time{Time: time.Time{}.In(zone)}
	case 2:
		return resource.Time{Time: time.Now()} // monotonic reading, nanoseconds, local zone
	case 3:
		return resource.Time{Time: time.Date(2026, 3, 4, 5, 6, 7, 891, zone)}
	case 4:
		return resource.Time{Time: time.Date(1, 1, 1, 0, 0, 1, 5, time.UTC)}
	case 5:
		if r.Intn(4) == 0 {
			return resource.Time{Time: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)} // cannot be encoded
		}
		return resource.Time{Time: time.Date(9999, 12, 31, 23, 59, 59, 999, time.UTC)}
	case 6:
		return resource.Time{Time: time.Date(0, 6, 1, 0, 0, 0, 0, time.UTC)}
	}
	return resource.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
}

// FindMember returns the value of the first member of the JSON object b whose key is
// key, as a subslice of b, found with encoding/json (for objcodec.SpliceMeta).
func FindMember(b []byte, key string) ([]byte, bool) {
	d := json.NewDecoder(bytes.NewReader(b))
	if t, err := d.Token(); err != nil || t != json.Delim('{') {
		return nil, false
	}
	for d.More() {
		t, err := d.Token()
		if err != nil {
			return nil, false
		}
		var v json.RawMessage
		if err := d.Decode(&v); err != nil {
			return nil, false
		}
		if t == key {
			end := int(d.InputOffset())
			return b[end-len(v) : end], true
		}
	}
	return nil, false
}
