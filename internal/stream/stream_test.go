package stream_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/alpinashop/alpipe/internal/docstore"
	"github.com/alpinashop/alpipe/internal/docstore/boltstore"
	"github.com/alpinashop/alpipe/internal/docstore/docstoretest"
	"github.com/alpinashop/alpipe/internal/stream"
	"github.com/alpinashop/alpipe/internal/stream/streamtest"
)

func newBoltStore(t testing.TB) *boltstore.Store {
	t.Helper()
	s, err := boltstore.Open(filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	return s
}

// boltFeatures sizes the embedded-store suites: half the default random
// streams (the emulator suites and the -race run add their own), so that
// the package fits the test run's budget on 2 cores.
func boltFeatures() streamtest.Features {
	if testing.Short() {
		return streamtest.Features{Streams: 2, Events: 100, DefaultStreams: 1, FaultStreams: 1}
	}
	return streamtest.Features{Streams: 5}
}

func newBolt(t *testing.T) docstore.Store { return newBoltStore(t) }

// The embedded-store suites and the emulator's run beside each other (the
// one waits on the CPU, the other on the emulator), each mode after the
// other, so that the package is not the test run's long pole.
func TestConformanceBoltstore(t *testing.T) {
	t.Parallel()
	t.Run("Unbatched", func(t *testing.T) { streamtest.RunWith(t, newBolt, boltFeatures()) })
	t.Run("Batched", func(t *testing.T) { streamtest.RunWith(t, newBolt, batched(boltFeatures())) })
}

// batched turns batching on for a suite run: concurrent deliveries share
// batches, and the property tests cut their streams into random batches.
// Session parts of 2 KiB (a few sessions each) make the property tests
// double them often.
func batched(f streamtest.Features) streamtest.Features {
	f.Options = []stream.Option{stream.WithBatching(2*time.Millisecond, 64), stream.WithSessionPartBytes(2 << 10)}
	f.RandomBatches = true
	return f
}

// newEmulatorStore keeps the client's default of 5 attempts per
// transaction, as production does, so the hot-key test proves that a burst
// does not exhaust them.
func newEmulatorStore(t *testing.T) docstore.Store { return docstoretest.Emulator(t, 5) }

// TestConformanceFirestore runs the suite on the emulator, with fewer random
// streams. The emulator aborts a transaction that waits on a lock for long,
// and unbatched every order reads the control document ticks write: with
// the test suite sharing the emulator on 2 cores, 50 orders at once
// exhausted the 5 attempts in one CI run. So this mode, the fallback of
// BATCH_WAIT=0s, is held to 24 concurrent orders into one key; the campaign
// burst (200 at once) is the batched mode's, which production runs.
func TestConformanceFirestore(t *testing.T) {
	newEmulatorStore(t) // skip early, once, with the reason
	t.Parallel()
	t.Run("Unbatched", func(t *testing.T) { streamtest.RunWith(t, newEmulatorStore, emulatorFeatures(24)) })
	t.Run("Batched", func(t *testing.T) { streamtest.RunWith(t, newEmulatorStore, batched(emulatorFeatures(200))) })
}

func emulatorFeatures(hotKeyOrders int) streamtest.Features {
	return streamtest.Features{Streams: 3, Events: 120, DefaultStreams: 1, FaultStreams: 2,
		HotKeyOrders: hotKeyOrders, HotKeyTimeout: 3 * time.Minute, ChaosOrders: 120}
}
