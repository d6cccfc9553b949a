package stream_test

import (
	"testing"

	"github.com/alpinashop/alpipe/internal/docstore"
	"github.com/alpinashop/alpipe/internal/docstore/docstoretest"
	"github.com/alpinashop/alpipe/internal/stream"
	"github.com/alpinashop/alpipe/internal/stream/streamtest"
)

// Terraform is checked against stream.CollectionGroups and
// stream.TTLCollectionGroups (test/deploy): the conformance suite, run
// over a store that records the collection groups of every path written
// (batched, as production runs, and without -short unbatched too), proves
// that they are what the processor writes, no more, no less.
func TestCollectionGroups(t *testing.T) {
	g := docstoretest.NewGroups()
	newStore := func(t *testing.T) docstore.Store { return g.Wrap(newBoltStore(t)) }
	small := streamtest.Features{Streams: 1, Events: 60, DefaultStreams: 1, FaultStreams: 1,
		HotKeyOrders: 8, ConcurrentTicks: 2, ChaosOrders: 40}
	t.Run("Batched", func(t *testing.T) { streamtest.RunWith(t, newStore, batched(small)) })
	if !testing.Short() {
		t.Run("Unbatched", func(t *testing.T) { streamtest.RunWith(t, newStore, small) })
	}
	g.Check(t, "stream.CollectionGroups", stream.CollectionGroups(), stream.TTLCollectionGroups())
}
