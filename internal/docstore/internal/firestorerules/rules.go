// Package firestorerules holds Firestore's refusals that every docstore
// adapter must apply identically, so that the embedded store refuses exactly
// what Firestore refuses (limits checked against the gcloud emulator).
//
// The Firestore adapter stores Data in a string field "json", ExpireAt in a
// timestamp field "expire_at" and a non-empty Tag in an indexed string
// field "tag"; the size limits below are Firestore's for that layout.
package firestorerules

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/alpinashop/alpipe/internal/docstore"
)

const (
	maxIDBytes   = 1500     // a collection or document ID
	maxNameBytes = 6 * 1024 // a document name, counted as in DocPath
	// maxDataBytes is the emulator's (and Firestore's) cap on one string
	// field value: 1 MiB minus 89 bytes.
	maxDataBytes = 1<<20 - 89
	maxDocBytes  = 1 << 20
	// Field sizes: name bytes+1, string value bytes+1, timestamp 8; and a
	// document's own overhead.
	jsonFieldBytes   = len("json") + 1 + 1
	expireFieldBytes = len("expire_at") + 1 + 8
	tagFieldBytes    = len("tag") + 1 + 1
	docOverheadBytes = 32
	// MaxTagBytes is Firestore's limit on an indexed string: 1,500 bytes
	// counting a string as its UTF-8 bytes plus one. A longer value is
	// indexed truncated and refused as a query value ("too large to be used
	// in a query"), so a document with it could never be listed. An index
	// entry (at most 7.5 KiB) holds the document name, the field and 32
	// bytes: the longest name with the longest tag is exactly 7,680 bytes,
	// so that limit needs no check of its own.
	MaxTagBytes = 1499
)

var (
	errBadData = errors.New("docstore: bad document data")
	// ErrNested is returned by RunTx called with the context of a running
	// transaction: the Firestore client refuses it too, and the embedded
	// store would deadlock on its single writer.
	ErrNested = errors.New("docstore: nested transaction")
	errTxDone = errors.New("docstore: transaction used after its function returned")

	minTime = time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)
	maxTime = time.Date(9999, 12, 31, 23, 59, 59, 999999000, time.UTC)
)

// Path is a validated document path split at its last segment.
type Path struct {
	Full, Collection, ID string
	nameBytes            int
}

func docPath(p string) (Path, error) {
	segs, err := segments(p)
	if err != nil {
		return Path{}, err
	}
	if len(segs)%2 != 0 {
		return Path{}, badPath(p, "names a collection, not a document")
	}
	// Firestore's size of a name: each segment's bytes plus one, plus 16.
	n := 16
	for _, s := range segs {
		n += len(s) + 1
	}
	if n > maxNameBytes {
		return Path{}, badPath(p, "longer than Firestore's 6 KiB document name limit")
	}
	i := strings.LastIndexByte(p, '/')
	return Path{Full: p, Collection: p[:i], ID: p[i+1:], nameBytes: n}, nil
}

// CollectionPath validates p as a collection path.
func CollectionPath(p string) error {
	segs, err := segments(p)
	if err == nil && len(segs)%2 != 1 {
		return badPath(p, "names a document, not a collection")
	}
	return err
}

func segments(p string) ([]string, error) {
	if p == "" {
		return nil, badPath(p, "empty")
	}
	segs := strings.Split(p, "/")
	for _, s := range segs {
		var why string
		switch {
		case s == "":
			why = "empty segment"
		case s == "." || s == "..":
			why = fmt.Sprintf("segment %q is reserved", s)
		case len(s) > maxIDBytes:
			why = fmt.Sprintf("segment of %d bytes exceeds %d", len(s), maxIDBytes)
		case !utf8.ValidString(s):
			why = "segment is not valid UTF-8"
		case len(s) >= 4 && strings.HasPrefix(s, "__") && strings.HasSuffix(s, "__"):
			why = fmt.Sprintf("segment %q is reserved (__.*__)", s)
		default:
			continue
		}
		return nil, badPath(p, why)
	}
	return segs, nil
}

func badPath(p, why string) error {
	return fmt.Errorf("%w %q: %s", docstore.ErrBadPath, shortPath(p), why)
}

// shortPath keeps error messages readable for paths up to 6 KiB long.
func shortPath(p string) string {
	if len(p) > 80 {
		return p[:80] + "..."
	}
	return p
}

// checkDoc validates d for Set and returns its path and d as stored.
func checkDoc(d docstore.Doc) (Path, docstore.Doc, error) {
	p, err := docPath(d.Path)
	if err != nil {
		return Path{}, docstore.Doc{}, err
	}
	if err := checkData(d.Data); err != nil {
		return Path{}, docstore.Doc{}, fmt.Errorf("%w: %s: %v", errBadData, d.Path, err)
	}
	if err := CheckTag(d.Tag, false); err != nil {
		return Path{}, docstore.Doc{}, fmt.Errorf("%w (document %s)", err, shortPath(d.Path))
	}
	size := p.nameBytes + jsonFieldBytes + len(d.Data) + docOverheadBytes
	if d.Tag != "" {
		size += tagFieldBytes + len(d.Tag)
	}
	if !d.ExpireAt.IsZero() {
		if d.ExpireAt.Before(minTime) || d.ExpireAt.After(maxTime) {
			return Path{}, docstore.Doc{}, fmt.Errorf("%w: %s: expiry %v outside years 1-9999", errBadData, d.Path, d.ExpireAt)
		}
		size += expireFieldBytes
	}
	if size > maxDocBytes {
		return Path{}, docstore.Doc{}, fmt.Errorf("%w: %s: document of %d bytes exceeds Firestore's 1 MiB", errBadData, d.Path, size)
	}
	return p, docstore.Doc{Path: d.Path, Data: d.Data, ExpireAt: NormTime(d.ExpireAt), Tag: d.Tag, Exists: true}, nil
}

// NormTime returns t as Firestore gives it back: UTC, microseconds.
func NormTime(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return t.UTC().Truncate(time.Microsecond)
}

func checkData(b []byte) error {
	switch t := bytes.TrimLeft(b, " \t\r\n"); {
	case len(b) > maxDataBytes:
		return fmt.Errorf("%d bytes exceed Firestore's %d-byte field limit", len(b), maxDataBytes)
	case len(t) == 0 || t[0] != '{':
		return errors.New("not a JSON object")
	case !utf8.Valid(b): // json.Valid alone lets bad bytes through inside strings
		return errors.New("not valid UTF-8")
	case !json.Valid(b):
		return errors.New("not valid JSON")
	}
	return nil
}

// CheckTag validates tag as a Doc.Tag (empty: none) or, with need, as the
// tag argument of ListTag.
func CheckTag(tag string, need bool) error {
	switch {
	case tag == "" && need:
		return fmt.Errorf("%w: empty", docstore.ErrBadTag)
	case len(tag) > MaxTagBytes:
		return fmt.Errorf("%w: %d bytes exceed Firestore's %d-byte limit on an indexed string", docstore.ErrBadTag, len(tag), MaxTagBytes)
	case !utf8.ValidString(tag):
		return fmt.Errorf("%w: not valid UTF-8", docstore.ErrBadTag)
	}
	return nil
}

type txKey struct{}

// WithTx marks ctx as belonging to a running transaction.
func WithTx(ctx context.Context) context.Context { return context.WithValue(ctx, txKey{}, true) }

// InTx reports whether ctx belongs to a running transaction.
func InTx(ctx context.Context) bool { return ctx.Value(txKey{}) != nil }

// Backend is an adapter's side of one transaction attempt: it runs the
// calls that Tx has checked.
type Backend interface {
	Get(ps []Path) ([]docstore.Doc, error)
	Set(p Path, d docstore.Doc) error
	Delete(p Path) error
}

// Tx is the docstore.Tx of one attempt of a transaction function: it
// serialises the calls (the adapters' transactions are not safe for
// concurrent use) and checks each against what every adapter must refuse
// before its Backend runs it. The first violation or backend error sticks:
// RunTx fails with it even if fn drops the error, as the Firestore client
// does for read-after-write, so that a swallowed error can never commit half
// of what fn meant to do.
type Tx struct {
	B           Backend
	mu          sync.Mutex
	wrote, done bool
	err         error
}

var _ docstore.Tx = (*Tx)(nil)

// Get implements docstore.Tx.
func (t *Tx) Get(paths ...string) ([]docstore.Doc, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.done {
		return nil, errTxDone
	}
	if t.wrote {
		return nil, t.fail(docstore.ErrReadAfterWrite)
	}
	ps := make([]Path, len(paths))
	for i, p := range paths {
		var err error
		if ps[i], err = docPath(p); err != nil {
			return nil, t.fail(err)
		}
	}
	docs, err := t.B.Get(ps)
	if err != nil {
		return nil, t.fail(err)
	}
	return docs, nil
}

// Set implements docstore.Tx; the Backend gets d as it is stored.
func (t *Tx) Set(d docstore.Doc) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.done {
		return errTxDone
	}
	p, nd, err := checkDoc(d)
	if err == nil {
		t.wrote = true
		err = t.B.Set(p, nd)
	}
	return t.fail(err)
}

// Delete implements docstore.Tx.
func (t *Tx) Delete(path string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.done {
		return errTxDone
	}
	p, err := docPath(path)
	if err == nil {
		t.wrote = true
		err = t.B.Delete(p)
	}
	return t.fail(err)
}

// fail records err (unless nil) as the attempt's outcome unless one is
// already recorded, and returns err.
func (t *Tx) fail(err error) error {
	if t.err == nil {
		t.err = err
	}
	return err
}

// End closes the attempt and returns what RunTx must report for it: fn's
// own error, else the first recorded violation, else nil (commit).
func (t *Tx) End(fnErr error) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.done = true
	if fnErr != nil {
		return fnErr
	}
	return t.err
}
