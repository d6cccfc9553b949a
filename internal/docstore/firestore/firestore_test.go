package firestore_test

import (
	"testing"

	gfs "cloud.google.com/go/firestore"

	"github.com/alpinashop/alpipe/internal/docstore"
	"github.com/alpinashop/alpipe/internal/docstore/docstoretest"
	"github.com/alpinashop/alpipe/internal/docstore/firestore"
)

// emulatorAttempts is generous because the emulator resolves contended
// lock upgrades slowly; production keeps the client's default.
const emulatorAttempts = 50

func TestConformance(t *testing.T) {
	docstoretest.Emulator(t, emulatorAttempts) // skip early, once, with the reason
	docstoretest.Run(t, func(t *testing.T) docstore.Store { return docstoretest.Emulator(t, emulatorAttempts) })
}

func TestNewRefuses(t *testing.T) {
	if _, err := firestore.New(nil); err == nil {
		t.Error("New(nil) succeeded")
	}
	if _, err := firestore.New(&gfs.Client{}, firestore.WithMaxAttempts(0)); err == nil {
		t.Error("New with 0 attempts succeeded")
	}
}
