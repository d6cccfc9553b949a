package firestore_test

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"

	gfs "cloud.google.com/go/firestore"

	"github.com/alpinashop/alpipe/internal/docstore"
	"github.com/alpinashop/alpipe/internal/docstore/docstoretest"
	"github.com/alpinashop/alpipe/internal/docstore/firestore"
)

// emulatorAttempts is generous because the emulator resolves contended
// lock upgrades slowly; production keeps the client's default.
const emulatorAttempts = 50

// NewEmulatorStore returns a Store on the Firestore emulator in a project
// of its own, so that tests never see each other's documents, or skips t.
func newEmulatorStore(t *testing.T) *firestore.Store {
	t.Helper()
	if testing.Short() {
		t.Skip("skipped under -short: needs the Firestore emulator")
	}
	if os.Getenv("FIRESTORE_EMULATOR_HOST") == "" {
		t.Skip("FIRESTORE_EMULATOR_HOST is unset: start `gcloud emulators firestore start --host-port=127.0.0.1:8681` and export FIRESTORE_EMULATOR_HOST=127.0.0.1:8681")
	}
	b := make([]byte, 6)
	rand.Read(b)
	client, err := gfs.NewClient(t.Context(), "alpipe-"+hex.EncodeToString(b))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	s, err := firestore.New(client, firestore.WithMaxAttempts(emulatorAttempts))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestConformance(t *testing.T) {
	newEmulatorStore(t) // skip early, once, with the reason
	docstoretest.Run(t, func(t *testing.T) docstore.Store { return newEmulatorStore(t) })
}

func TestNewRefuses(t *testing.T) {
	if _, err := firestore.New(nil); err == nil {
		t.Error("New(nil) succeeded")
	}
	client := &gfs.Client{}
	if _, err := firestore.New(client, firestore.WithMaxAttempts(0)); err == nil {
		t.Error("New with 0 attempts succeeded")
	}
}
