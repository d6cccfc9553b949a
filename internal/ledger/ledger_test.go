package ledger_test

import (
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alpinashop/alpipe/internal/docstore"
	"github.com/alpinashop/alpipe/internal/docstore/boltstore"
	"github.com/alpinashop/alpipe/internal/docstore/docstoretest"
	"github.com/alpinashop/alpipe/internal/ledger"
	"github.com/alpinashop/alpipe/internal/ledger/ledgertest"
)

func newBolt(t testing.TB) docstore.Store {
	s, err := boltstore.Open(filepath.Join(t.TempDir(), "ledger.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestLedgerBolt(t *testing.T) {
	ledgertest.Run(t, func(t *testing.T) docstore.Store { return newBolt(t) })
}

func TestLedgerFirestore(t *testing.T) {
	docstoretest.Emulator(t, 50) // skip early, once, with the reason
	// The emulator resolves contended claims slowly; see docstoretest.
	ledgertest.Run(t, func(t *testing.T) docstore.Store { return docstoretest.Emulator(t, 50) })
}

// TestKeyString: operators read this form in backfill, requeue and
// duplicate reasons; a space in the name stays as it is.
func TestKeyString(t *testing.T) {
	k := ledger.Key{Bucket: "landing", Object: "exportaciones/2026/11/29/a b.csv", Generation: 1764410400000001}
	if got, want := k.String(), "gs://landing/exportaciones/2026/11/29/a b.csv#1764410400000001"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}

func TestDecisionString(t *testing.T) {
	for d, want := range map[ledger.Decision]string{
		ledger.Proceed: "proceed", ledger.Busy: "busy", ledger.Decision(9): "decision(9)",
	} {
		if got := d.String(); got != want {
			t.Errorf("Decision(%d).String() = %q, want %q", int(d), got, want)
		}
	}
}

func TestNewRefuses(t *testing.T) {
	if _, err := ledger.New(nil, ledger.Options{}); err == nil {
		t.Error("New(nil store) succeeded")
	}
	if _, err := ledger.New(newBolt(t), ledger.Options{Lease: -1}); err == nil {
		t.Error("New with a negative lease succeeded")
	}
}

// BenchmarkClaimFinish measures one file's ledger traffic on the embedded
// store: Claim (with MD5 lookup) then Finish, two fsynced transactions.
func BenchmarkClaimFinish(b *testing.B) {
	for _, par := range []int{0, 16} {
		name := "serial"
		if par > 0 {
			name = fmt.Sprintf("parallel-%dxGOMAXPROCS", par)
		}
		b.Run(name, func(b *testing.B) {
			l, err := ledger.New(newBolt(b), ledger.Options{})
			if err != nil {
				b.Fatal(err)
			}
			now := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
			var n atomic.Int64
			file := func() error {
				i := n.Add(1)
				k := ledger.Key{Bucket: "landing", Object: fmt.Sprintf("exportaciones/2026/11/29/f%d.csv", i), Generation: i}
				c, err := l.Claim(b.Context(), k, fmt.Sprintf("md5-%d", i), "bench", now)
				if err != nil {
					return err
				}
				rec := c.Record
				rec.State = ledger.Done
				rec.Counts = ledger.Counts{Read: 10, Loaded: 9, Quarantined: 1, Rejects: map[string]int64{"invalid_date": 1}}
				return l.Finish(b.Context(), rec, now)
			}
			if par == 0 {
				for b.Loop() {
					if err := file(); err != nil {
						b.Fatal(err)
					}
				}
			} else {
				b.SetParallelism(par)
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						if err := file(); err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "files/s")
		})
	}
}
