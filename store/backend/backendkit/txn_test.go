package backendkit_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/management-service/mgmt/store/backend"
	"github.com/management-service/mgmt/store/backend/backendkit"
)

func puts(keys ...string) []backend.Op {
	ops := make([]backend.Op, len(keys))
	for i, k := range keys {
		ops[i] = backend.Op{Key: k, Value: []byte("v")}
	}
	return ops
}

func manyKeys(n int) []string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("k/%d", i)
	}
	return keys
}

func TestValidateTxnRefusesMalformedTransactions(t *testing.T) {
	many := manyKeys(20)
	tests := []struct {
		name    string
		txn     backend.Txn
		maxKey  int
		wantErr string // "" for valid
	}{
		{name: "empty transaction is valid", txn: backend.Txn{}},
		{
			name: "compares and distinct ops are valid",
			txn: backend.Txn{
				Compares: []backend.Compare{{Key: "a", ModRevision: 0}, {Key: "a", ModRevision: 3}},
				Ops:      append(puts("a", "b"), backend.Op{Key: "c", Delete: true}),
			},
		},
		{
			name:    "compare with an empty key",
			txn:     backend.Txn{Compares: []backend.Compare{{Key: "a"}, {Key: ""}}},
			wantErr: "compare 1 has an empty key",
		},
		{
			name:    "compare with a negative revision",
			txn:     backend.Txn{Compares: []backend.Compare{{Key: "a", ModRevision: -2}}},
			wantErr: "compare 0 has negative revision -2",
		},
		{
			name:    "compares are checked before ops",
			txn:     backend.Txn{Compares: []backend.Compare{{Key: ""}}, Ops: puts("")},
			wantErr: "compare 0 has an empty key",
		},
		{
			name:    "op with an empty key",
			txn:     backend.Txn{Ops: puts("a", "")},
			wantErr: "op 1 has an empty key",
		},
		{
			name:    "the same key in two ops, few ops",
			txn:     backend.Txn{Ops: append(puts("a", "b"), backend.Op{Key: "a", Delete: true})},
			wantErr: `key "a" appears in two ops`,
		},
		{
			name:    "the same key in two ops, many ops",
			txn:     backend.Txn{Ops: puts(append(many, "k/3")...)},
			wantErr: `key "k/3" appears in two ops`,
		},
		{name: "many distinct ops are valid", txn: backend.Txn{Ops: puts(many...)}},
		{
			name:    "the same key in the ninth op, nine ops go through the set",
			txn:     backend.Txn{Ops: puts("a", "b", "c", "d", "e", "f", "g", "h", "b")},
			wantErr: `key "b" appears in two ops`,
		},
		{
			name:    "the same key in the eighth op, eight ops are compared pairwise",
			txn:     backend.Txn{Ops: puts("a", "b", "c", "d", "e", "f", "g", "c")},
			wantErr: `key "c" appears in two ops`,
		},
		{
			name:    "a key longer than maxKey",
			txn:     backend.Txn{Ops: puts("ok", strings.Repeat("x", 11))},
			maxKey:  10,
			wantErr: "op 1 has a key of 11 bytes, more than 10",
		},
		{
			name:   "a key of exactly maxKey bytes",
			txn:    backend.Txn{Ops: puts(strings.Repeat("x", 10))},
			maxKey: 10,
		},
		{
			name:    "the length is checked before the duplicate",
			txn:     backend.Txn{Ops: puts(strings.Repeat("x", 11), strings.Repeat("x", 11))},
			maxKey:  10,
			wantErr: "op 0 has a key of 11 bytes, more than 10",
		},
		{
			name: "maxKey 0: any length",
			txn:  backend.Txn{Ops: puts(strings.Repeat("x", 100_000))},
		},
		{
			name:   "compare keys have no length bound",
			txn:    backend.Txn{Compares: []backend.Compare{{Key: strings.Repeat("x", 11)}}},
			maxKey: 10,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := backendkit.ValidateTxn(tt.txn, tt.maxKey)
			if tt.wantErr == "" {
				assert.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, backend.ErrInvalidArgument)
			assert.EqualError(t, err, "backend: invalid argument: "+tt.wantErr)
		})
	}
}

func TestFailedCompareFindsTheFirstThatDoesNotHold(t *testing.T) {
	state := map[string]int64{"a": 3, "b": 5}
	modRev := func(key string) (int64, error) { return state[key], nil } // absent: 0
	tests := []struct {
		name     string
		compares []backend.Compare
		want     int
	}{
		{name: "no compares: all hold", want: -1},
		{name: "all hold", compares: []backend.Compare{{Key: "a", ModRevision: 3}, {Key: "b", ModRevision: 5}}, want: -1},
		{name: "absent key compared with 0 holds", compares: []backend.Compare{{Key: "zzz", ModRevision: 0}}, want: -1},
		{name: "absent key compared with a revision fails", compares: []backend.Compare{{Key: "zzz", ModRevision: 1}}, want: 0},
		{name: "existing key compared with 0 fails", compares: []backend.Compare{{Key: "a"}}, want: 0},
		{
			name:     "the first failing one is named",
			compares: []backend.Compare{{Key: "a", ModRevision: 3}, {Key: "b", ModRevision: 4}, {Key: "a", ModRevision: 1}},
			want:     1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := backendkit.FailedCompare(tt.compares, modRev, nil)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestFailedCompareStopsAtTheFirstFailureOrError(t *testing.T) {
	var asked []string
	boom := errors.New("boom")
	modRev := func(key string) (int64, error) {
		asked = append(asked, key)
		if key == "bad" {
			return 0, boom
		}
		return 1, nil
	}
	got, err := backendkit.FailedCompare([]backend.Compare{{Key: "a", ModRevision: 1}, {Key: "bad", ModRevision: 1}, {Key: "c", ModRevision: 1}}, modRev, nil)
	assert.Same(t, boom, err)
	assert.Equal(t, -1, got)
	assert.Equal(t, []string{"a", "bad"}, asked)

	asked = nil
	got, err = backendkit.FailedCompare([]backend.Compare{{Key: "a", ModRevision: 2}, {Key: "bad", ModRevision: 1}}, modRev, nil)
	require.NoError(t, err)
	assert.Equal(t, 0, got)
	assert.Equal(t, []string{"a"}, asked, "nothing is looked up after the first compare that fails")
}
