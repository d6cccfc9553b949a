package cost

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/docstore"
	"github.com/alpinashop/alpipe/internal/docstore/boltstore"
	"github.com/alpinashop/alpipe/internal/numeric"
	"github.com/alpinashop/alpipe/internal/warehouse"
	"github.com/alpinashop/alpipe/internal/window"
)

func newCounting(t *testing.T) *CountingStore {
	t.Helper()
	s, err := boltstore.Open(filepath.Join(t.TempDir(), "count.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return NewCountingStore(s)
}

func TestCountingStore(t *testing.T) {
	exp := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	errStop := errors.New("stop")
	type step struct {
		phase Phase
		list  string // a List of this collection instead of a transaction
		tag   string // with list: a ListTag of this tag
		fn    func(tx docstore.Tx) error
	}
	set := func(path string, expire bool) func(tx docstore.Tx) error {
		return func(tx docstore.Tx) error {
			d := docstore.Doc{Path: path, Data: []byte(`{"n":1}`)}
			if expire {
				d.ExpireAt = exp
			}
			return tx.Set(d)
		}
	}
	for _, tc := range []struct {
		name  string
		steps []step
		phase Phase
		want  Ops
	}{
		{
			name: "a missing document is a read, and a write commits",
			steps: []step{{phase: PhaseOrder, fn: func(tx docstore.Tx) error {
				if _, err := tx.Get("a/1", "a/2"); err != nil {
					return err
				}
				return tx.Set(docstore.Doc{Path: "a/1", Data: []byte(`{}`)})
			}}},
			phase: PhaseOrder,
			want: Ops{Transactions: 1, GetCalls: 1, Reads: 2, ReadsMissing: 2, Writes: 1, RPCs: 3,
				TxByKind: map[string]int64{"other": 1}, RPCsByKind: map[string]int64{"other": 3}},
		},
		{
			name: "a failed transaction bills its reads, not its writes",
			steps: []step{{phase: PhaseOrder, fn: func(tx docstore.Tx) error {
				if _, err := tx.Get("a/1"); err != nil {
					return err
				}
				if err := tx.Set(docstore.Doc{Path: "a/1", Data: []byte(`{}`)}); err != nil {
					return err
				}
				return errStop
			}}},
			phase: PhaseOrder,
			want: Ops{Transactions: 1, GetCalls: 1, Reads: 1, ReadsMissing: 1, RPCs: 3,
				TxByKind: map[string]int64{"other": 1}, RPCsByKind: map[string]int64{"other": 3}},
		},
		{
			name: "an empty query is billed one read",
			steps: []step{
				{phase: PhaseTick, fn: set("c/1", false)},
				{phase: PhaseTick, fn: set("c/2", false)},
				{phase: PhaseTick, list: "c"},
				{phase: PhaseTick, list: "empty"},
			},
			phase: PhaseTick,
			want: Ops{Transactions: 2, Writes: 2, Lists: 2, ListDocs: 2, ListReads: 3, RPCs: 6,
				TxByKind: map[string]int64{"outbox-delete": 2}, RPCsByKind: map[string]int64{"outbox-delete": 4, "list": 2}},
		},
		{
			name: "a tag listing is a query billed like a listing",
			steps: []step{
				{phase: PhaseTick, fn: func(tx docstore.Tx) error {
					for _, d := range []docstore.Doc{
						{Path: "c/1", Data: []byte(`{}`), Tag: "g"},
						{Path: "c/2", Data: []byte(`{}`), Tag: "g"},
						{Path: "c/3", Data: []byte(`{}`), Tag: "h"},
						{Path: "c/4", Data: []byte(`{}`)},
					} {
						if err := tx.Set(d); err != nil {
							return err
						}
					}
					return nil
				}},
				{phase: PhaseTick, list: "c", tag: "g"},
				{phase: PhaseTick, list: "c", tag: "none"},
			},
			phase: PhaseTick,
			want: Ops{Transactions: 1, Writes: 4, Lists: 2, ListDocs: 2, ListReads: 3, RPCs: 4,
				TxByKind: map[string]int64{"outbox-delete": 1}, RPCsByKind: map[string]int64{"outbox-delete": 2, "list": 2}},
		},
		{
			name: "a tag counts in the size of a document that expires",
			steps: []step{{phase: PhaseOrder, fn: func(tx docstore.Tx) error {
				return tx.Set(docstore.Doc{Path: "o/1", Data: []byte(`{"n":1}`), Tag: "gen-7", ExpireAt: exp})
			}}},
			phase: PhaseOrder,
			want: Ops{Transactions: 1, Writes: 1, TTLDeletes: 1, TTLBytes: int64(len("o/1") + len(`{"n":1}`) + len("gen-7")), RPCs: 2,
				TxByKind: map[string]int64{"outbox-delete": 1}, RPCsByKind: map[string]int64{"outbox-delete": 2}},
		},
		{
			name: "a document with an expiry is one TTL delete, unless deleted",
			steps: []step{
				{phase: PhaseOrder, fn: set("o/1", true)},
				{phase: PhaseOrder, fn: set("o/1", true)}, // rewritten: still one
				{phase: PhaseOrder, fn: set("o/2", true)},
				{phase: PhaseOrder, fn: func(tx docstore.Tx) error { return tx.Delete("o/2") }},
			},
			phase: PhaseOrder,
			want: Ops{Transactions: 4, Writes: 3, Deletes: 1, TTLDeletes: 1, TTLBytes: int64(len("o/1") + len(`{"n":1}`)), RPCs: 8,
				TxByKind: map[string]int64{"outbox-delete": 4}, RPCsByKind: map[string]int64{"outbox-delete": 8}},
		},
		{
			name: "tick transactions are named by what they read first",
			steps: []step{
				{phase: PhaseTick, fn: func(tx docstore.Tx) error { _, err := tx.Get("aggregations/a/control/lease"); return err }},
				{phase: PhaseTick, fn: func(tx docstore.Tx) error {
					_, err := tx.Get("aggregations/a/control/fold", "stream/control")
					return err
				}},
				{phase: PhaseTick, fn: func(tx docstore.Tx) error { _, err := tx.Get("stream/control"); return err }},
				{phase: PhaseTick, fn: func(tx docstore.Tx) error {
					if _, err := tx.Get("aggregations/a/control/fold", "stream/control"); err != nil {
						return err
					}
					_, err := tx.Get("aggregations/a/state/20261123T090000Z_0")
					return err
				}},
				{phase: PhaseTick, fn: func(tx docstore.Tx) error {
					_, err := tx.Get("aggregations/b/control/fold", "stream/control")
					return err
				}},
			},
			phase: PhaseTick,
			want: Ops{Transactions: 5, GetCalls: 6, Reads: 9, ReadsMissing: 9, RPCs: 16,
				TxByKind:   map[string]int64{"tick-lease": 1, "tick-control": 1, "tick-fold-state": 2, "tick-fold": 1},
				RPCsByKind: map[string]int64{"tick-lease": 3, "tick-control": 3, "tick-fold-state": 6, "tick-fold": 4}},
		},
		{
			name: "a new tick reads the fold state again",
			steps: []step{
				{phase: PhaseTick, fn: func(tx docstore.Tx) error { _, err := tx.Get("aggregations/a/control/fold"); return err }},
				{phase: PhaseOrder, fn: func(tx docstore.Tx) error { return nil }},
				{phase: PhaseTick, fn: func(tx docstore.Tx) error { _, err := tx.Get("aggregations/a/control/fold"); return err }},
			},
			phase: PhaseTick,
			want: Ops{Transactions: 2, GetCalls: 2, Reads: 2, ReadsMissing: 2, RPCs: 6,
				TxByKind: map[string]int64{"tick-fold-state": 2}, RPCsByKind: map[string]int64{"tick-fold-state": 6}},
		},
		{
			name: "an empty Get is no request",
			steps: []step{{phase: PhaseTick, fn: func(tx docstore.Tx) error {
				if _, err := tx.Get(); err != nil {
					return err
				}
				_, err := tx.Get("aggregations/a/control/fold")
				return err
			}}},
			phase: PhaseTick,
			want: Ops{Transactions: 1, GetCalls: 1, Reads: 1, ReadsMissing: 1, RPCs: 3,
				TxByKind: map[string]int64{"tick-fold-state": 1}, RPCsByKind: map[string]int64{"tick-fold-state": 3}},
		},
		{
			name: "the control fence and orders are named apart",
			steps: []step{
				{phase: PhaseOrder, fn: func(tx docstore.Tx) error {
					_, err := tx.Get("stream/control", "stream/dedup", "aggregations/a/control/watermark")
					return err
				}},
				{phase: PhaseOrder, fn: func(tx docstore.Tx) error {
					_, err := tx.Get("stream/control", "stream/dedup/orders/ab_W-1")
					return err
				}},
			},
			phase: PhaseOrder,
			want: Ops{Transactions: 2, GetCalls: 2, Reads: 5, ReadsMissing: 5, RPCs: 6,
				TxByKind: map[string]int64{"control-fence": 1, "order": 1}, RPCsByKind: map[string]int64{"control-fence": 3, "order": 3}},
		},
		{
			name: "operations are charged to their phase",
			steps: []step{
				{phase: PhaseLedger, fn: func(tx docstore.Tx) error { _, err := tx.Get("ledger/x"); return err }},
				{phase: PhaseOrder, fn: func(tx docstore.Tx) error {
					_, err := tx.Get("stream/control", "stream/dedup/orders/ab_1", "stream/dedup/orders/cd_2")
					return err
				}},
			},
			phase: PhaseOrder,
			want: Ops{Transactions: 1, GetCalls: 1, Reads: 3, ReadsMissing: 3, RPCs: 3,
				TxByKind: map[string]int64{"order": 1}, RPCsByKind: map[string]int64{"order": 3}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCounting(t)
			ctx := context.Background()
			var phase Phase
			for _, s := range tc.steps {
				if s.phase != phase {
					c.SetPhase(s.phase) // a new phase: for PhaseTick, a new tick
					phase = s.phase
				}
				if s.list != "" {
					var err error
					if s.tag != "" {
						_, err = c.ListTag(ctx, s.list, s.tag, 0)
					} else {
						_, err = c.List(ctx, s.list)
					}
					if err != nil {
						t.Fatal(err)
					}
					continue
				}
				if err := c.RunTx(ctx, func(_ context.Context, tx docstore.Tx) error { return s.fn(tx) }); err != nil && !errors.Is(err, errStop) {
					t.Fatal(err)
				}
			}
			if diff := cmp.Diff(tc.want, c.Ops(tc.phase)); diff != "" {
				t.Errorf("ops (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCountingSink(t *testing.T) {
	pt, err := warehouse.Lookup(warehouse.VentasHoraPaisPaneles)
	if err != nil {
		t.Fatal(err)
	}
	// A pane row with every column set: its logical size by the rules.
	vals := make([]warehouse.Value, len(pt.Schema))
	var want int64
	for i, f := range pt.Schema {
		switch f.Type {
		case warehouse.String:
			vals[i] = warehouse.StringValue("ES")
			want += 4
		case warehouse.Numeric:
			vals[i] = warehouse.DecValue(numeric.FromNanos(1))
			want += 16
		default:
			vals[i] = warehouse.IntValue(1)
			want += 8
		}
	}
	s := NewCountingSink([]window.Spec{window.Defaults()})
	s.SetPhase(PhaseTick)
	row := warehouse.Row{ID: "p1", Values: vals}
	if err := s.Append(context.Background(), pt.Name, []warehouse.Row{row, row}); err != nil {
		t.Fatal(err)
	}
	wantAppends := Appends{Calls: 1, Rows: 2, Repeats: 1, LogicalBytes: 2 * want, BilledBytes: 2 * StreamingMinRowBytes}
	if diff := cmp.Diff(wantAppends, s.Appends(PhaseTick, pt.Name)); diff != "" {
		t.Errorf("appends (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(Appends{}, s.Appends(PhaseOrder, pt.Name)); diff != "" {
		t.Errorf("appends charged to orders (-want +got):\n%s", diff)
	}
	if err := s.Append(context.Background(), pt.Name, []warehouse.Row{{ID: "short", Values: vals[:1]}}); err == nil {
		t.Error("a row with missing columns was accepted")
	}
}
