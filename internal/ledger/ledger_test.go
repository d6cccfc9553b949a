package ledger_test

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"

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
	tests := []struct {
		name  string
		state ledger.State
		want  bool
	}{
		{"in progress", ledger.InProgress, false},
		{"failed", ledger.Failed, false},
		{"done", ledger.Done, true},
		{"rejected", ledger.Rejected, true},
		{"skipped", ledger.Skipped, true},
		{"duplicate", ledger.Duplicate, true},
		{"unknown", ledger.State("X"), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.state.Final(); got != tc.want {
				t.Errorf("%s.Final() = %v, want %v", tc.state, got, tc.want)
			}
		})
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
