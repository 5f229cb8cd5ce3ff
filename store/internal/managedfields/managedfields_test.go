package managedfields

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/resource"
)

const gv = "management.service/v1"

var t0 = time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)

// at is t0 plus n minutes.
func at(n int) time.Time { return t0.Add(time.Duration(n) * time.Minute) }

// want is an expected entry: manager, operation (empty: Update), time in minutes after
// t0 (negative: no time), fieldsV1 and subresource.
type want struct {
	manager, op string
	min         int
	fields      string
	sub         string
}

func entries(ws ...want) []resource.ManagedFieldsEntry {
	var out []resource.ManagedFieldsEntry
	for _, w := range ws {
		e := resource.ManagedFieldsEntry{
			Manager: w.manager, Operation: w.op, APIVersion: gv,
			FieldsType: resource.FieldsTypeV1, FieldsV1: json.RawMessage(w.fields), Subresource: w.sub,
		}
		if e.Operation == "" {
			e.Operation = resource.ManagedFieldsOperationUpdate
		}
		if w.min >= 0 {
			e.Time = resource.NewTimePtr(at(w.min))
		}
		out = append(out, e)
	}
	return out
}

// show renders entries compactly for comparison.
func show(es []resource.ManagedFieldsEntry) []string {
	var out []string
	for _, e := range es {
		tm := "-"
		if e.Time != nil {
			tm = fmt.Sprintf("+%dm", int(e.Time.Sub(t0)/time.Minute))
		}
		out = append(out, fmt.Sprintf("%s/%s/%s/%s %s %s %s", e.Manager, e.Operation, e.APIVersion, e.Subresource, tm, e.FieldsType, e.FieldsV1))
	}
	return out
}

func TestUpdateCreate(t *testing.T) {
	tests := []struct {
		name string
		sent []resource.ManagedFieldsEntry
		obj  string
		w    Write
		want []resource.ManagedFieldsEntry
	}{
		{
			name: "create by one manager records every field",
			obj:  `{"apiVersion":"management.service/v1","kind":"K","metadata":{"name":"a","labels":{"app":"x"}},"spec":{"ttl":5,"scope":{"projects":[{"project":"p"}]}}}`,
			w:    Write{Manager: "alice", APIVersion: gv, Now: at(1)},
			want: entries(want{manager: "alice", min: 1,
				fields: `{"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":{".":{},"f:scope":{".":{},"f:projects":{}},"f:ttl":{}}}`}),
		},
		{
			name: "create without a manager records unknown",
			obj:  `{"spec":{"ttl":5}}`,
			w:    Write{APIVersion: gv, Now: at(1)},
			want: entries(want{manager: UnknownManager, min: 1, fields: `{"f:spec":{".":{},"f:ttl":{}}}`}),
		},
		{
			name: "create of an object with nothing tracked records nothing",
			obj:  `{"apiVersion":"v1","kind":"K","metadata":{"name":"a"}}`,
			w:    Write{Manager: "alice", APIVersion: gv, Now: at(1)},
			want: nil,
		},
		{
			name: "create with client entries: the creator takes every field it sets",
			sent: entries(want{manager: "other", min: 0, fields: `{"f:spec":{"f:ttl":{}},"f:data":{}}`}),
			obj:  `{"spec":{"ttl":5}}`,
			w:    Write{Manager: "alice", APIVersion: gv, Now: at(1)},
			want: entries(
				want{manager: "other", min: 0, fields: `{"f:data":{}}`},
				want{manager: "alice", min: 1, fields: `{"f:spec":{".":{},"f:ttl":{}}}`}),
		},
		{
			name: "create ignores status when the kind has a status subresource",
			obj:  `{"spec":{"ttl":5},"status":{"phase":"x"}}`,
			w:    Write{Manager: "alice", APIVersion: gv, Now: at(1), StatusSubresource: true},
			want: entries(want{manager: "alice", min: 1, fields: `{"f:spec":{".":{},"f:ttl":{}}}`}),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			base, err := Resolve(nil, tc.sent, "")
			require.NoError(t, err)
			got, err := Update(base, nil, []byte(tc.obj), tc.w)
			require.NoError(t, err)
			assert.Equal(t, show(tc.want), show(got))
			if len(got) > 0 {
				fs, err := FromObject([]byte(tc.obj), tc.w)
				require.NoError(t, err)
				assert.JSONEq(t, fs.String(), string(got[len(got)-1].FieldsV1), "the creator records FromObject")
			}
		})
	}
}

// TestUpdateTwoManagers runs one sequence of writes by two managers and checks the
// entries and times after each step.
func TestUpdateTwoManagers(t *testing.T) {
	steps := []struct {
		name    string
		manager string
		min     int
		obj     string
		want    []resource.ManagedFieldsEntry
	}{
		{
			name: "create by A records every field for A", manager: "A", min: 1,
			obj: `{"metadata":{"name":"x","labels":{"app":"a"}},"spec":{"ttl":5,"scope":{"allowServiceCli":false}}}`,
			want: entries(want{manager: "A", min: 1,
				fields: `{"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":{".":{},"f:scope":{".":{},"f:allowServiceCli":{}},"f:ttl":{}}}`}),
		},
		{
			name: "B changing a field A owns moves it to B and leaves A's time", manager: "B", min: 2,
			obj: `{"metadata":{"name":"x","labels":{"app":"a"}},"spec":{"ttl":10,"scope":{"allowServiceCli":false}}}`,
			want: entries(
				want{manager: "A", min: 1, fields: `{"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":{".":{},"f:scope":{".":{},"f:allowServiceCli":{}}}}`},
				want{manager: "B", min: 2, fields: `{"f:spec":{"f:ttl":{}}}`}),
		},
		{
			name: "a write that changes nothing changes no time", manager: "B", min: 3,
			obj: `{"metadata":{"name":"x","labels":{"app":"a"}},"spec":{"ttl":10,"scope":{"allowServiceCli":false}}}`,
			want: entries(
				want{manager: "A", min: 1, fields: `{"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":{".":{},"f:scope":{".":{},"f:allowServiceCli":{}}}}`},
				want{manager: "B", min: 2, fields: `{"f:spec":{"f:ttl":{}}}`}),
		},
		{
			name: "setting a field to the value it has takes nothing over", manager: "B", min: 4,
			obj: `{"metadata":{"name":"x","labels":{"app":"a"}},"spec":{"ttl":10.0,"scope":{"allowServiceCli":false}}}`,
			want: entries(
				want{manager: "A", min: 1, fields: `{"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":{".":{},"f:scope":{".":{},"f:allowServiceCli":{}}}}`},
				want{manager: "B", min: 2, fields: `{"f:spec":{"f:ttl":{}}}`}),
		},
		{
			name: "A adding a field gains it and bumps A's time", manager: "A", min: 5,
			obj: `{"metadata":{"name":"x","labels":{"app":"a","tier":"t"}},"spec":{"ttl":10,"scope":{"allowServiceCli":false}}}`,
			want: entries(
				want{manager: "B", min: 2, fields: `{"f:spec":{"f:ttl":{}}}`},
				want{manager: "A", min: 5, fields: `{"f:metadata":{"f:labels":{".":{},"f:app":{},"f:tier":{}}},"f:spec":{".":{},"f:scope":{".":{},"f:allowServiceCli":{}}}}`}),
		},
		{
			name: "B removing a field A owns removes it from A, bumps B and leaves A's time", manager: "B", min: 6,
			obj: `{"metadata":{"name":"x","labels":{"tier":"t"}},"spec":{"ttl":10,"scope":{"allowServiceCli":false}}}`,
			want: entries(
				want{manager: "A", min: 5, fields: `{"f:metadata":{"f:labels":{".":{},"f:tier":{}}},"f:spec":{".":{},"f:scope":{".":{},"f:allowServiceCli":{}}}}`},
				want{manager: "B", min: 6, fields: `{"f:spec":{"f:ttl":{}}}`}),
		},
		{
			name: "A changing a value it owns bumps A's time", manager: "A", min: 7,
			obj: `{"metadata":{"name":"x","labels":{"tier":"t"}},"spec":{"ttl":10,"scope":{"allowServiceCli":true}}}`,
			want: entries(
				want{manager: "B", min: 6, fields: `{"f:spec":{"f:ttl":{}}}`},
				want{manager: "A", min: 7, fields: `{"f:metadata":{"f:labels":{".":{},"f:tier":{}}},"f:spec":{".":{},"f:scope":{".":{},"f:allowServiceCli":{}}}}`}),
		},
		{
			name: "A removing B's only field drops B's entry", manager: "A", min: 8,
			obj: `{"metadata":{"name":"x","labels":{"tier":"t"}},"spec":{"scope":{"allowServiceCli":true}}}`,
			want: entries(
				want{manager: "A", min: 8, fields: `{"f:metadata":{"f:labels":{".":{},"f:tier":{}}},"f:spec":{".":{},"f:scope":{".":{},"f:allowServiceCli":{}}}}`}),
		},
		{
			name: "B replacing an object by a scalar takes it and its fields leave A", manager: "B", min: 9,
			obj: `{"metadata":{"name":"x","labels":{"tier":"t"}},"spec":{"scope":"all"}}`,
			want: entries(
				want{manager: "A", min: 8, fields: `{"f:metadata":{"f:labels":{".":{},"f:tier":{}}},"f:spec":{}}`},
				want{manager: "B", min: 9, fields: `{"f:spec":{"f:scope":{}}}`}),
		},
		{
			name: "A removing the whole spec removes it from every entry", manager: "A", min: 10,
			obj: `{"metadata":{"name":"x","labels":{"tier":"t"}}}`,
			want: entries(
				want{manager: "A", min: 10, fields: `{"f:metadata":{"f:labels":{".":{},"f:tier":{}}}}`}),
		},
	}
	var (
		cur  []resource.ManagedFieldsEntry
		prev []byte
	)
	for _, st := range steps {
		ok := t.Run(st.name, func(t *testing.T) {
			got, err := Update(cur, prev, []byte(st.obj), Write{Manager: st.manager, APIVersion: gv, Now: at(st.min)})
			require.NoError(t, err)
			assert.Equal(t, show(st.want), show(got))
			cur, prev = got, []byte(st.obj)
		})
		if !ok {
			return
		}
	}
}

func TestUpdateKeys(t *testing.T) {
	obj0 := `{"spec":{"a":1,"b":1}}`
	live := entries(want{manager: "m", min: 1, fields: `{"f:spec":{".":{},"f:a":{},"f:b":{}}}`})

	t.Run("another apiVersion is another entry", func(t *testing.T) {
		got, err := Update(live, []byte(obj0), []byte(`{"spec":{"a":2,"b":1}}`), Write{Manager: "m", APIVersion: "management.service/v2", Now: at(2)})
		require.NoError(t, err)
		require.Len(t, got, 2)
		assert.Equal(t, gv, got[0].APIVersion)
		assert.JSONEq(t, `{"f:spec":{".":{},"f:b":{}}}`, string(got[0].FieldsV1))
		assert.Equal(t, "management.service/v2", got[1].APIVersion)
		assert.JSONEq(t, `{"f:spec":{"f:a":{}}}`, string(got[1].FieldsV1))
	})
	t.Run("a status write is its own entry and records status only", func(t *testing.T) {
		got, err := Update(live, []byte(obj0), []byte(`{"spec":{"a":1,"b":1},"status":{"phase":"ok"}}`),
			Write{Manager: "m", APIVersion: gv, Subresource: "status", Now: at(2), StatusSubresource: true})
		require.NoError(t, err)
		assert.Equal(t, show(entries(
			want{manager: "m", min: 1, fields: `{"f:spec":{".":{},"f:a":{},"f:b":{}}}`},
			want{manager: "m", min: 2, fields: `{"f:status":{".":{},"f:phase":{}}}`, sub: "status"})), show(got))
	})
	t.Run("a main-resource write does not touch status when the kind has a status subresource", func(t *testing.T) {
		withStatus := append(entries(want{manager: "ctl", min: 0, fields: `{"f:status":{".":{},"f:phase":{}}}`, sub: "status"}), live...)
		got, err := Update(withStatus, []byte(`{"spec":{"a":1,"b":1},"status":{"phase":"ok"}}`), []byte(`{"spec":{"a":1,"b":1}}`),
			Write{Manager: "m", APIVersion: gv, Now: at(2), StatusSubresource: true})
		require.NoError(t, err)
		assert.Equal(t, show(withStatus), show(got))
	})
	t.Run("apply entries keep their time and lose taken fields", func(t *testing.T) {
		in := append(entries(want{manager: "ssa", op: resource.ManagedFieldsOperationApply, min: 0, fields: `{"f:spec":{"f:a":{},"f:c":{}}}`}), live...)
		got, err := Update(in, []byte(`{"spec":{"a":1,"b":1,"c":1}}`), []byte(`{"spec":{"a":5,"b":1,"c":1}}`), Write{Manager: "x", APIVersion: gv, Now: at(3)})
		require.NoError(t, err)
		assert.Equal(t, show(entries(
			want{manager: "ssa", op: resource.ManagedFieldsOperationApply, min: 0, fields: `{"f:spec":{"f:c":{}}}`},
			want{manager: "m", min: 1, fields: `{"f:spec":{".":{},"f:b":{}}}`},
			want{manager: "x", min: 3, fields: `{"f:spec":{"f:a":{}}}`})), show(got))
	})
	t.Run("paths below a rewritten atomic list leave other entries", func(t *testing.T) {
		in := entries(want{manager: "z", min: 1, fields: `{"f:spec":{"f:list":{"k:{\"name\":\"a\"}":{".":{},"f:image":{}}},"f:b":{}}}`})
		got, err := Update(in, []byte(`{"spec":{"list":[{"name":"a","image":"x"}],"b":1}}`),
			[]byte(`{"spec":{"list":[{"name":"a","image":"y"}],"b":1}}`), Write{Manager: "x", APIVersion: gv, Now: at(3)})
		require.NoError(t, err)
		assert.Equal(t, show(entries(
			want{manager: "z", min: 1, fields: `{"f:spec":{"f:b":{}}}`},
			want{manager: "x", min: 3, fields: `{"f:spec":{"f:list":{}}}`})), show(got))
	})
	t.Run("a repeated key keeps the last entry", func(t *testing.T) {
		in := entries(
			want{manager: "m", min: 1, fields: `{"f:spec":{"f:a":{}}}`},
			want{manager: "m", min: 2, fields: `{"f:spec":{"f:b":{}}}`})
		got, err := Update(in, []byte(obj0), []byte(obj0), Write{Manager: "x", APIVersion: gv, Now: at(3)})
		require.NoError(t, err)
		assert.Equal(t, show(entries(want{manager: "m", min: 2, fields: `{"f:spec":{"f:b":{}}}`})), show(got))
	})
	t.Run("inputs are not modified", func(t *testing.T) {
		in := entries(want{manager: "m", min: 1, fields: `{ "f:spec" : {"f:a":{},"f:b":{}} }`})
		before := show(in)
		_, err := Update(in, []byte(obj0), []byte(`{"spec":{"a":2}}`), Write{Manager: "x", APIVersion: gv, Now: at(3)})
		require.NoError(t, err)
		assert.Equal(t, before, show(in))
	})
	t.Run("update is idempotent when nothing changes", func(t *testing.T) {
		in := entries(
			want{manager: "b", min: 1, fields: `{"f:spec":{"f:b":{}}}`},
			want{manager: "a", op: resource.ManagedFieldsOperationApply, min: -1, fields: `{"f:spec":{"f:a":{}}}`})
		once, err := Update(in, []byte(obj0), []byte(obj0), Write{Manager: "x", APIVersion: gv, Now: at(3)})
		require.NoError(t, err)
		twice, err := Update(once, []byte(obj0), []byte(obj0), Write{Manager: "x", APIVersion: gv, Now: at(4)})
		require.NoError(t, err)
		assert.Equal(t, once, twice)
		assert.Equal(t, resource.ManagedFieldsOperationApply, once[0].Operation, "Apply sorts first")
	})
}

func TestUpdateErrors(t *testing.T) {
	good := []byte(`{"spec":{}}`)
	t.Run("fieldsV1 that does not parse names the entry", func(t *testing.T) {
		in := entries(want{manager: "ok", min: 1, fields: `{}`}, want{manager: "bad", min: 1, fields: `{"f:a":1}`})
		_, err := Update(in, good, good, Write{Manager: "x", Now: at(1)})
		var ee *EntryError
		require.True(t, errors.As(err, &ee), "got %v", err)
		assert.Equal(t, 1, ee.Index)
		assert.Equal(t, "metadata.managedFields[1].fieldsV1", ee.Field)
		assert.Contains(t, err.Error(), `manager "bad"`)
		assert.Contains(t, err.Error(), `the value of "f:a" must be a JSON object`)
	})
	t.Run("an unknown operation names the entry", func(t *testing.T) {
		in := entries(want{manager: "m", op: "Patch", min: 1, fields: `{}`})
		_, err := Update(in, good, good, Write{Manager: "x", Now: at(1)})
		var ee *EntryError
		require.True(t, errors.As(err, &ee), "got %v", err)
		assert.Equal(t, "metadata.managedFields[0].operation", ee.Field)
	})
	for _, obj := range []string{`[]`, `nope`, ``} {
		t.Run("objects must be JSON objects: "+obj, func(t *testing.T) {
			_, err := Update(nil, good, []byte(obj), Write{})
			assert.Error(t, err)
			_, err = Update(nil, []byte(obj), good, Write{})
			assert.Error(t, err)
		})
	}
}

func TestUpdateCap(t *testing.T) {
	field := func(i int) string { return fmt.Sprintf(`{"f:spec":{"f:f%02d":{}}}`, i) }

	t.Run("the oldest update entries fold into ancient-changes", func(t *testing.T) {
		// Twelve managers each set their own field, one minute apart.
		var cur []resource.ManagedFieldsEntry
		prev := []byte(`{"spec":{}}`)
		spec := map[string]int{}
		for i := 1; i <= 12; i++ {
			spec[fmt.Sprintf("f%02d", i)] = i
			next, err := json.Marshal(map[string]any{"spec": spec})
			require.NoError(t, err)
			cur, err = Update(cur, prev, next, Write{Manager: fmt.Sprintf("m%02d", i), APIVersion: gv, Now: at(i)})
			require.NoError(t, err)
			prev = next
			assert.LessOrEqual(t, len(cur), MaxUpdateEntries)
		}
		var ws []want
		ws = append(ws, want{manager: AncientChangesManager, min: 3, fields: `{"f:spec":{"f:f01":{},"f:f02":{},"f:f03":{}}}`})
		for i := 4; i <= 12; i++ {
			ws = append(ws, want{manager: fmt.Sprintf("m%02d", i), min: i, fields: field(i)})
		}
		assert.Equal(t, show(entries(ws...)), show(cur))
	})
	t.Run("apply entries are never capped nor counted", func(t *testing.T) {
		var in []resource.ManagedFieldsEntry
		for i := 1; i <= 5; i++ {
			in = append(in, entries(want{manager: fmt.Sprintf("a%02d", i), op: resource.ManagedFieldsOperationApply, min: 0, fields: field(i)})...)
		}
		for i := 6; i <= 15; i++ {
			in = append(in, entries(want{manager: fmt.Sprintf("u%02d", i), min: i, fields: field(i)})...)
		}
		got, err := Update(in, []byte(`{}`), []byte(`{}`), Write{Manager: "x", APIVersion: gv, Now: at(20)})
		require.NoError(t, err)
		assert.Equal(t, show(in), show(got), "5 Apply + 10 Update entries stay")

		in = append(in, entries(want{manager: "u16", min: 16, fields: field(16)})...)
		got, err = Update(in, []byte(`{}`), []byte(`{}`), Write{Manager: "x", APIVersion: gv, Now: at(20)})
		require.NoError(t, err)
		require.Len(t, got, 15)
		for i := 0; i < 5; i++ {
			assert.Equal(t, resource.ManagedFieldsOperationApply, got[i].Operation)
		}
		assert.Equal(t, AncientChangesManager, got[5].Manager)
		assert.JSONEq(t, `{"f:spec":{"f:f06":{},"f:f07":{}}}`, string(got[5].FieldsV1))
		assert.Equal(t, at(7), got[5].Time.Time)
	})
	t.Run("ties in time fold by manager order and an existing bucket absorbs", func(t *testing.T) {
		var in []resource.ManagedFieldsEntry
		in = append(in, entries(want{manager: AncientChangesManager, min: 5, fields: field(0)})...)
		for i := 1; i <= 11; i++ {
			in = append(in, entries(want{manager: fmt.Sprintf("u%02d", i), min: 1, fields: field(i)})...)
		}
		got, err := Update(in, []byte(`{}`), []byte(`{}`), Write{Manager: "x", APIVersion: gv, Now: at(20)})
		require.NoError(t, err)
		require.Len(t, got, MaxUpdateEntries)
		var bucket *resource.ManagedFieldsEntry
		for i := range got {
			if got[i].Manager == AncientChangesManager {
				bucket = &got[i]
			}
		}
		require.NotNil(t, bucket)
		assert.JSONEq(t, `{"f:spec":{"f:f00":{},"f:f01":{},"f:f02":{}}}`, string(bucket.FieldsV1))
		assert.Equal(t, at(5), bucket.Time.Time, "the bucket keeps the latest time")
	})
	t.Run("entries of different apiVersions fold separately", func(t *testing.T) {
		var in []resource.ManagedFieldsEntry
		for i := 1; i <= 12; i++ {
			e := entries(want{manager: fmt.Sprintf("u%02d", i), min: i, fields: field(i)})[0]
			if i%2 == 0 {
				e.APIVersion = "management.service/v2"
			}
			in = append(in, e)
		}
		got, err := Update(in, []byte(`{}`), []byte(`{}`), Write{Manager: "x", APIVersion: gv, Now: at(20)})
		require.NoError(t, err)
		require.Len(t, got, MaxUpdateEntries)
		assert.Equal(t, []string{
			"ancient-changes/Update/management.service/v1/ +3m FieldsV1 " + `{"f:spec":{"f:f01":{},"f:f03":{}}}`,
			"ancient-changes/Update/management.service/v2/ +4m FieldsV1 " + `{"f:spec":{"f:f02":{},"f:f04":{}}}`,
		}, show(got)[:2])
	})
}

func TestResolve(t *testing.T) {
	live := entries(
		want{manager: "A", min: 1, fields: `{"f:spec":{".":{},"f:a":{}}}`},
		want{manager: "B", min: 2, fields: `{"f:spec":{"f:b":{}}}`})
	oldObj := []byte(`{"spec":{"a":1,"b":1}}`)
	sentOther := entries(want{manager: "Z", min: 0, fields: `{"f:spec":{"f:a":{},"f:b":{}}}`})

	tests := []struct {
		name   string
		sent   []resource.ManagedFieldsEntry
		sub    string
		newObj string
		want   []resource.ManagedFieldsEntry
	}{
		{
			name: "no managedFields sent keeps the live ones", sent: nil, newObj: `{"spec":{"a":1,"b":2}}`,
			want: entries(
				want{manager: "A", min: 1, fields: `{"f:spec":{".":{},"f:a":{}}}`},
				want{manager: "C", min: 9, fields: `{"f:spec":{"f:b":{}}}`}),
		},
		{
			name: "an empty list resets and records only this write", sent: []resource.ManagedFieldsEntry{}, newObj: `{"spec":{"a":1,"b":2}}`,
			want: entries(want{manager: "C", min: 9, fields: `{"f:spec":{"f:b":{}}}`}),
		},
		{
			name: "a list of one empty entry resets", sent: []resource.ManagedFieldsEntry{{}}, newObj: `{"spec":{"a":1,"b":2}}`,
			want: entries(want{manager: "C", min: 9, fields: `{"f:spec":{"f:b":{}}}`}),
		},
		{
			name: "a reset with no change leaves no managedFields", sent: []resource.ManagedFieldsEntry{}, newObj: `{"spec":{"a":1,"b":1}}`,
			want: nil,
		},
		{
			name: "different valid entries overwrite, then the write is recorded on top", sent: sentOther, newObj: `{"spec":{"a":1,"b":2}}`,
			want: entries(
				want{manager: "Z", min: 0, fields: `{"f:spec":{"f:a":{}}}`},
				want{manager: "C", min: 9, fields: `{"f:spec":{"f:b":{}}}`}),
		},
		{
			name: "managedFields sent through a subresource are ignored", sent: []resource.ManagedFieldsEntry{}, sub: "status",
			newObj: `{"spec":{"a":1,"b":1},"status":{"x":1}}`,
			want:   append(live[:2:2], entries(want{manager: "C", min: 9, fields: `{"f:status":{".":{},"f:x":{}}}`, sub: "status"})...),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			base, err := Resolve(live, tc.sent, tc.sub)
			require.NoError(t, err)
			got, err := Update(base, oldObj, []byte(tc.newObj), Write{Manager: "C", APIVersion: gv, Subresource: tc.sub, Now: at(9)})
			require.NoError(t, err)
			assert.Equal(t, show(tc.want), show(got))
		})
	}

	t.Run("malformed sent fieldsV1 is an entry error", func(t *testing.T) {
		bad := entries(want{manager: "Z", min: 0, fields: `{"f:spec":"x"}`})
		_, err := Resolve(live, bad, "")
		var ee *EntryError
		require.True(t, errors.As(err, &ee), "got %v", err)
		assert.Equal(t, "metadata.managedFields[0].fieldsV1", ee.Field)
	})
	t.Run("malformed sent entries are ignored on a subresource", func(t *testing.T) {
		bad := entries(want{manager: "Z", min: 0, fields: `{"f:spec":"x"}`})
		got, err := Resolve(live, bad, "status")
		require.NoError(t, err)
		assert.Equal(t, live, got)
	})
}

func TestIsReset(t *testing.T) {
	null := json.RawMessage("null")
	tests := []struct {
		name string
		sent []resource.ManagedFieldsEntry
		want bool
	}{
		{"nil is not a reset", nil, false},
		{"an empty list is a reset", []resource.ManagedFieldsEntry{}, true},
		{"one empty entry is a reset", []resource.ManagedFieldsEntry{{}}, true},
		{"one entry with null fieldsV1 and time is a reset", []resource.ManagedFieldsEntry{{FieldsV1: null, Time: &resource.Time{}}}, true},
		{"two empty entries are not a reset", []resource.ManagedFieldsEntry{{}, {}}, false},
		{"one entry with a manager is not a reset", []resource.ManagedFieldsEntry{{Manager: "m"}}, false},
		{"one entry with fields is not a reset", []resource.ManagedFieldsEntry{{FieldsV1: json.RawMessage(`{}`)}}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, IsReset(tc.sent))
		})
	}
	t.Run("json [] and [{}] decode to resets", func(t *testing.T) {
		for _, in := range []string{`{"managedFields":[]}`, `{"managedFields":[{}]}`, `{"managedFields":[{"time":null,"fieldsV1":null}]}`} {
			var m resource.ObjectMeta
			require.NoError(t, json.Unmarshal([]byte(in), &m))
			assert.True(t, IsReset(m.ManagedFields), in)
		}
		var m resource.ObjectMeta
		require.NoError(t, json.Unmarshal([]byte(`{}`), &m))
		assert.False(t, IsReset(m.ManagedFields))
	})
}
