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

// TickLease is how long a tick owns an aggregation. A tick releases it when
// it ends; a tick that dies holding it delays the next ones by at most this
// much processing time. A tick outliving its lease is still correct, only
// duplicated work.
const TickLease = 2 * time.Minute

// Paths of the documents of one aggregation (see the package comment).
type paths struct {
	fold   string // foldDoc
	lease  string
	outbox string // collection
	state  string // collection: partDoc per window and part
	parked string // collection: elements of windows whose state could not be read
	// sessions: collection, sessionsPart per part of a session aggregation
	sessions string
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
// Terraform declares exactly these (each group's json unindexed, the TTL
// policies; test/deploy compares), and the package's tests check them
// against every path the conformance suite writes. Both are read off the
// paths the processor builds its documents from.
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

// TTLCollectionGroups: see CollectionGroups. The tick lease, the dedup
// records and the dead letters' seen records expire.
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

// leaseDoc is the tick lease of an aggregation.
type leaseDoc struct {
	Holder string    `json:"holder"`
	Until  time.Time `json:"until"`
}

// seenDoc records that an invalid message was dead-lettered.
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
// document that does not decode, or window state of another layout, is an
// ErrUnreadableState: retrying does not help.
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
	if err := tx.Set(d); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
