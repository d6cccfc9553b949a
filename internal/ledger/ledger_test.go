package ledger_test

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	gfs "cloud.google.com/go/firestore"
	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/docstore"
	"github.com/alpinashop/alpipe/internal/docstore/boltstore"
	"github.com/alpinashop/alpipe/internal/docstore/firestore"
	"github.com/alpinashop/alpipe/internal/ledger"
	"github.com/alpinashop/alpipe/internal/ledger/ledgertest"
)

func TestLedgerBolt(t *testing.T) {
	ledgertest.Run(t, func(t *testing.T) docstore.Store {
		s, err := boltstore.Open(filepath.Join(t.TempDir(), "ledger.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}

func TestLedgerFirestore(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped under -short: needs the Firestore emulator")
	}
	if os.Getenv("FIRESTORE_EMULATOR_HOST") == "" {
		t.Skip("FIRESTORE_EMULATOR_HOST is unset: start `gcloud emulators firestore start --host-port=127.0.0.1:8681` and export FIRESTORE_EMULATOR_HOST=127.0.0.1:8681")
	}
	ledgertest.Run(t, func(t *testing.T) docstore.Store {
		b := make([]byte, 6)
		rand.Read(b)
		client, err := gfs.NewClient(t.Context(), "alpipe-"+hex.EncodeToString(b))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { client.Close() })
		// The emulator resolves contended claims slowly; see docstoretest.
		s, err := firestore.New(client, firestore.WithMaxAttempts(50))
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

func TestKeyString(t *testing.T) {
	k := ledger.Key{Bucket: "landing", Object: "exportaciones/2026/11/29/a b.csv", Generation: 1764410400000001}
	if diff := cmp.Diff("gs://landing/exportaciones/2026/11/29/a b.csv#1764410400000001", k.String()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestStateFinal(t *testing.T) {
	for state, want := range map[ledger.State]bool{
		ledger.InProgress: false, ledger.Failed: false, "X": false,
		ledger.Done: true, ledger.Rejected: true, ledger.Skipped: true, ledger.Duplicate: true,
	} {
		if got := state.Final(); got != want {
			t.Errorf("%s.Final() = %v, want %v", state, got, want)
		}
	}
}

func TestNewRefuses(t *testing.T) {
	if _, err := ledger.New(nil, ledger.Options{}); err == nil {
		t.Error("New(nil store) succeeded")
	}
	s, err := boltstore.Open(filepath.Join(t.TempDir(), "l.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := ledger.New(s, ledger.Options{Lease: -1}); err == nil {
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
			s, err := boltstore.Open(filepath.Join(b.TempDir(), "ledger.db"))
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			l, err := ledger.New(s, ledger.Options{})
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
