package stream

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/alpinashop/alpipe/internal/docstore"
)

// DedupRetention is how long a dedup record outlives the moment its window
// can first expire: Pub/Sub's default message retention, the longest a
// redelivery can come after the first delivery.
const DedupRetention = 7 * 24 * time.Hour

// MaxBatchOrders bounds WithBatching's batch size.
const MaxBatchOrders = 1000

// TickLease is how long a tick owns an aggregation: a tick that dies
// holding it delays the next ones by at most this much. A tick outliving its
// lease is still correct, only duplicated work.
const TickLease = 2 * time.Minute

// paths of the documents of one aggregation (see the package comment).
type paths struct {
	fold, lease                     string
	outbox, state, parked, sessions string // collections
}

func pathsOf(agg string) paths {
	root := "aggregations/" + agg
	return paths{
		fold:     root + "/control/fold",
		lease:    root + "/control/lease",
		outbox:   root + "/outbox",
		state:    root + "/state",
		parked:   root + "/parked",
		sessions: root + "/sessions",
	}
}

// CollectionGroups are the Firestore collection IDs the processor writes,
// and TTLCollectionGroups those of them whose documents carry an ExpireAt:
// Terraform declares exactly these (test/deploy compares), and
// TestCollectionGroups checks them against every path the suite writes.
func CollectionGroups() []string {
	p := pathsOf("a")
	var out []string
	for _, doc := range []string{p.fold, p.lease, p.outbox + "/d", p.state + "/d", p.parked + "/d",
		p.sessions + "/d", deadSeen + "/d", deadOutbox + "/d", dedupRecords + "/d", controlPath} {
		for i, seg := range strings.Split(doc, "/") {
			if i%2 == 0 && !slices.Contains(out, seg) {
				out = append(out, seg) // a path alternates collection and document IDs
			}
		}
	}
	slices.Sort(out)
	return out
}

// TTLCollectionGroups: see CollectionGroups.
func TTLCollectionGroups() []string {
	var out []string
	for _, doc := range []string{pathsOf("a").lease, dedupRecords + "/d", deadSeen + "/d"} {
		segs := strings.Split(doc, "/")
		out = append(out, segs[len(segs)-2])
	}
	return out
}

const (
	deadSeen   = "stream/deadletters/seen"
	deadOutbox = "stream/deadletters/outbox"
)

type leaseDoc struct {
	Holder string    `json:"holder"`
	Until  time.Time `json:"until"`
}

type seenDoc struct {
	Reason     string    `json:"reason"`
	ReceivedAt time.Time `json:"received_at"`
}

func encodeDoc(path string, v any, expireAt time.Time) (docstore.Doc, error) {
	if d, ok := v.(versioned); ok {
		v = d.stamped()
	}
	b, err := json.Marshal(v)
	if err != nil {
		return docstore.Doc{}, fmt.Errorf("encode %s: %w", path, err)
	}
	return docstore.Doc{Path: path, Data: b, ExpireAt: expireAt}, nil
}

// decodeDoc fills v from d; a missing document leaves v as it is. A
// document that does not decode, or of another layout, is an
// ErrUnreadableState.
func decodeDoc(d docstore.Doc, v any) error {
	if !d.Exists {
		return nil
	}
	if err := json.Unmarshal(d.Data, v); err != nil {
		return unreadable(fmt.Errorf("decode %s: %w", d.Path, err))
	}
	if s, ok := v.(versioned); ok {
		return checkLayout(d.Path, s.layoutOf())
	}
	return nil
}

func set(tx docstore.Tx, path string, v any, expireAt time.Time) error {
	d, err := encodeDoc(path, v, expireAt)
	if err != nil {
		return err
	}
	return setIfChanged(tx, d, docstore.Doc{})
}

// writeIfChanged writes v at path unless the document read there holds the
// same bytes, so that a repeated tick writes nothing.
func writeIfChanged(tx docstore.Tx, path string, v any, read docstore.Doc) error {
	d, err := encodeDoc(path, v, time.Time{})
	if err != nil {
		return err
	}
	return setIfChanged(tx, d, read)
}

func setIfChanged(tx docstore.Tx, d, read docstore.Doc) error {
	if read.Exists && string(d.Data) == string(read.Data) {
		return nil
	}
	if err := tx.Set(d); err != nil {
		return fmt.Errorf("write %s: %w", d.Path, err)
	}
	return nil
}

func deleteAll(tx docstore.Tx, paths []string) error {
	for _, path := range paths {
		if err := tx.Delete(path); err != nil {
			return fmt.Errorf("delete %s: %w", path, err)
		}
	}
	return nil
}
