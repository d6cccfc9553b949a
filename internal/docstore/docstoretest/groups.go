package docstoretest

import (
	"context"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/docstore"
)

// Groups records the collection groups of every path a store it wraps
// writes, and of every document set with an ExpireAt, so that a package's
// suite proves its declared groups (which Terraform is checked against in
// test/deploy) are what it writes: no more, no less.
type Groups struct {
	mu                sync.Mutex
	written, expiring map[string]bool
}

// NewGroups returns an empty recorder.
func NewGroups() *Groups {
	return &Groups{written: map[string]bool{}, expiring: map[string]bool{}}
}

// Wrap returns s recording into g.
func (g *Groups) Wrap(s docstore.Store) docstore.Store { return groupStore{s, g} }

// Check compares what was recorded with the declared groups, named by
// what (e.g. "stream.CollectionGroups").
func (g *Groups) Check(t testing.TB, what string, groups, ttlGroups []string) {
	t.Helper()
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, c := range []struct {
		what     string
		declared []string
		got      map[string]bool
	}{
		{what + " against the collections of the paths written", groups, g.written},
		{what + " (TTL) against the groups of documents set with an ExpireAt", ttlGroups, g.expiring},
	} {
		if diff := cmp.Diff(slices.Sorted(slices.Values(c.declared)), slices.Sorted(maps.Keys(c.got))); diff != "" {
			t.Errorf("%s (-want +got):\n%s", c.what, diff)
		}
	}
}

func (g *Groups) add(path string, expires bool) {
	segs := strings.Split(path, "/")
	g.mu.Lock()
	defer g.mu.Unlock()
	// A path alternates collection and document IDs.
	for i := 0; i < len(segs); i += 2 {
		g.written[segs[i]] = true
	}
	if expires && len(segs) >= 2 {
		g.expiring[segs[len(segs)-2]] = true
	}
}

type groupStore struct {
	docstore.Store
	g *Groups
}

func (s groupStore) RunTx(ctx context.Context, fn func(ctx context.Context, tx docstore.Tx) error) error {
	return s.Store.RunTx(ctx, func(ctx context.Context, tx docstore.Tx) error {
		return fn(ctx, groupTx{tx, s.g})
	})
}

type groupTx struct {
	docstore.Tx
	g *Groups
}

func (tx groupTx) Set(d docstore.Doc) error {
	tx.g.add(d.Path, !d.ExpireAt.IsZero())
	return tx.Tx.Set(d)
}

func (tx groupTx) Delete(path string) error {
	tx.g.add(path, false)
	return tx.Tx.Delete(path)
}
