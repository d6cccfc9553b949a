// Package ledger is the idempotency ledger of file ingestion: one record per
// object generation, claimed under a lease before work starts and finished
// with its outcome, so that redelivered, concurrent and crashed deliveries of
// the same file do the work exactly once, and an identical re-upload under
// another name is recognised by its MD5.
//
// Records live in a docstore.Store: "ledger/<ID(key)>", plus an MD5 index
// "ledger_md5/<ID(md5)>" naming the key that last claimed that content. Both
// are JSON and change only inside transactions.
package ledger

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/alpinashop/alpipe/internal/docstore"
)

// Key names one generation of one object.
type Key struct {
	Bucket     string `json:"bucket"`
	Object     string `json:"object"`
	Generation int64  `json:"generation"`
}

// String returns "gs://bucket/object#generation".
func (k Key) String() string {
	return "gs://" + k.Bucket + "/" + k.Object + "#" + strconv.FormatInt(k.Generation, 10)
}

func (k Key) validate() error {
	if k.Bucket == "" || k.Object == "" {
		return fmt.Errorf("ledger: incomplete key %s", k)
	}
	return nil
}

// State is where a record stands.
type State string

const (
	InProgress State = "IN_PROGRESS"
	Done       State = "DONE"
	Rejected   State = "REJECTED"  // the whole file was refused (empty, binary, missing column)
	Skipped    State = "SKIPPED"   // no contract matches the object
	Duplicate  State = "DUPLICATE" // same MD5 as an earlier object, not loaded again
	Failed     State = "FAILED"    // the last attempt failed transiently; the next delivery takes over
)

// Final reports whether no further attempt may change the record.
func (s State) Final() bool {
	switch s {
	case Done, Rejected, Skipped, Duplicate:
		return true
	}
	return false
}

// Counts are a file's row accounting: Read = Loaded + Quarantined.
type Counts struct {
	Read        int64            `json:"read"`
	Loaded      int64            `json:"loaded"`
	Quarantined int64            `json:"quarantined"`
	Rejects     map[string]int64 `json:"rejects,omitempty"` // per reject code
}

// Record is the ledger entry of one key.
type Record struct {
	Key        Key       `json:"key"`
	State      State     `json:"state"`
	Feed       string    `json:"feed,omitempty"`
	MD5        string    `json:"md5,omitempty"`
	Attempt    int       `json:"attempt"`
	Owner      string    `json:"owner,omitempty"`
	LeaseUntil time.Time `json:"lease_until,omitzero"`
	StartedAt  time.Time `json:"started_at,omitzero"`
	FinishedAt time.Time `json:"finished_at,omitzero"`
	Counts     Counts    `json:"counts"`
	Reason     string    `json:"reason,omitempty"`
	// DuplicateOf names the earlier object with the same content.
	DuplicateOf   *Key   `json:"duplicate_of,omitempty"`
	Quarantine    string `json:"quarantine,omitempty"` // the quarantine object's name, if any
	LoadID        string `json:"load_id,omitempty"`
	AlreadyLoaded bool   `json:"already_loaded,omitempty"`
	// Drift is how the file's header differed from its contract; nil when
	// it matched. It is recorded even when the file loaded, so that an ERP
	// change is seen the day it happens, not when someone misses a column.
	Drift *Drift `json:"drift,omitempty"`
}

// Drift is the schema drift of one file's header against its contract.
type Drift struct {
	Added   []string `json:"added,omitempty"`   // header columns the contract does not declare (not loaded)
	Missing []string `json:"missing,omitempty"` // declared columns the header lacks
}

// Decision is what a Claim tells the caller to do.
type Decision int

const (
	Proceed         Decision = iota + 1 // the caller holds the lease and does the work
	AlreadyFinished                     // a final record exists; acknowledge the event
	// Busy: another attempt holds a live lease on this key or on the same
	// content (or failed on it); let the platform redeliver later.
	Busy
	DuplicateContent // the content was ingested under another key; a final Duplicate record was written
)

// String is the name logs and test failures print.
func (d Decision) String() string {
	names := [...]string{Proceed: "proceed", AlreadyFinished: "already-finished", Busy: "busy",
		DuplicateContent: "duplicate-content"}
	if d > 0 && int(d) < len(names) {
		return names[d]
	}
	return "decision(" + strconv.Itoa(int(d)) + ")"
}

// Claim is the outcome of Ledger.Claim.
type Claim struct {
	Decision Decision
	// Record: for Proceed the new InProgress record (pass it, completed, to
	// Finish); for AlreadyFinished the final one; for Busy the lease
	// holder's (possibly another key with the same MD5); for
	// DuplicateContent the Duplicate record written.
	Record Record
	// Previous is the record this claim took over (a Failed or expired
	// attempt, whose LoadID a retry must reconcile), nil if none.
	Previous *Record
}

// Options configures a Ledger.
type Options struct {
	// Lease is how long a claim holds the key before another delivery may
	// take it over. Default 10 min: longer than the 540 s limit of an
	// event-driven function, so a live attempt is never taken over.
	Lease time.Duration
}

// ErrLeaseLost is returned by Finish when another owner took the key over.
var ErrLeaseLost = errors.New("ledger: lease lost to another attempt")

// Ledger is the idempotency ledger over a docstore.Store.
type Ledger struct {
	store docstore.Store
	lease time.Duration
}

// New returns a Ledger on store.
func New(store docstore.Store, opt Options) (*Ledger, error) {
	if store == nil {
		return nil, errors.New("ledger: nil store")
	}
	if opt.Lease < 0 {
		return nil, fmt.Errorf("ledger: negative lease %v", opt.Lease)
	}
	if opt.Lease == 0 {
		opt.Lease = 10 * time.Minute
	}
	return &Ledger{store: store, lease: opt.Lease}, nil
}

const (
	recordCollection = "ledger"
	md5Collection    = "ledger_md5"
	objectCollection = "ledger_objects" // per object name, its newest DONE generation
	maxIDBytes       = 1500             // Firestore's document ID limit
)

// CollectionGroups are the Firestore collection IDs the ledger writes, and
// TTLCollectionGroups those of them whose documents carry an ExpireAt:
// Terraform declares exactly these (each group's json unindexed, the TTL
// policies; test/deploy compares), and ledgertest.Run checks them against
// every path the suite writes.
func CollectionGroups() []string {
	return []string{recordCollection, md5Collection, objectCollection, lockCollection}
}

// TTLCollectionGroups: see CollectionGroups.
func TTLCollectionGroups() []string { return []string{lockCollection} }

func recordPath(k Key) string   { return recordCollection + "/" + docID(k.String()) }
func md5Path(md5 string) string { return md5Collection + "/" + docID(md5) }
func objectPath(k Key) string   { return objectCollection + "/" + docID("gs://"+k.Bucket+"/"+k.Object) }

// current is an object's newest loaded generation: an identical re-upload
// of it changes nothing, while restoring an older content must load again
// so that it becomes the newest generation the daily aggregates count.
type current struct {
	Generation int64  `json:"generation"`
	MD5        string `json:"md5,omitempty"`
}

// docID is docstore.ID made safe for any object name: an ID over
// Firestore's 1,500 bytes (a long object name with escaped non-ASCII) or of
// the reserved form __x__ becomes a readable prefix, "%~" and the text's
// SHA-256. docstore.ID never emits "%~" (it only writes '%' before two hex
// digits), so the two forms cannot collide.
func docID(s string) string {
	id := docstore.ID(s)
	reserved := len(id) >= 4 && strings.HasPrefix(id, "__") && strings.HasSuffix(id, "__")
	if len(id) <= maxIDBytes && !reserved {
		return id
	}
	sum := sha256.Sum256([]byte(s))
	h := "%~" + hex.EncodeToString(sum[:])
	keep := min(len(id), maxIDBytes-len(h))
	if reserved {
		keep = 0
	}
	return id[:keep] + h
}

// index is the MD5 index document: the key that last claimed the content.
type index struct {
	Key Key `json:"key"`
}

// set writes d with v as its JSON data.
func set(tx docstore.Tx, d docstore.Doc, v any) (err error) {
	if d.Data, err = json.Marshal(v); err != nil {
		return fmt.Errorf("encode %s: %w", d.Path, err)
	}
	return tx.Set(d)
}

// read returns the value of the document at path, and whether it exists.
func read[T any](tx docstore.Tx, path string) (T, bool, error) {
	docs, err := tx.Get(path)
	if err != nil {
		return *new(T), false, err
	}
	return decode[T](docs[0])
}

// decode returns the value in d, and whether d exists; the zero T if not.
func decode[T any](d docstore.Doc) (T, bool, error) {
	var v T
	if !d.Exists {
		return v, false, nil
	}
	if err := json.Unmarshal(d.Data, &v); err != nil {
		return *new(T), false, fmt.Errorf("decode %s: %w", d.Path, err)
	}
	return v, true, nil
}
