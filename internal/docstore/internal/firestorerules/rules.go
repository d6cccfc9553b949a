// Package firestorerules holds Firestore's refusals that every docstore
// adapter must apply identically, so that the embedded store refuses exactly
// what Firestore refuses (limits checked against the gcloud emulator).
package firestorerules

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/alpinashop/alpipe/internal/docstore"
)

const (
	// MaxIDBytes is Firestore's limit on a collection or document ID.
	MaxIDBytes = 1500
	// maxNameBytes is Firestore's limit on a document name's size (6 KiB),
	// computed as in nameSize.
	maxNameBytes = 6 * 1024
)

// Path is a validated document path split at its last segment.
type Path struct {
	Full       string
	Collection string
	ID         string
	nameBytes  int
}

// DocPath validates p as a document path.
func DocPath(p string) (Path, error) {
	segs, err := segments(p)
	if err != nil {
		return Path{}, err
	}
	if len(segs)%2 != 0 {
		return Path{}, badPath(p, "names a collection, not a document")
	}
	n := nameSize(segs)
	if n > maxNameBytes {
		return Path{}, badPath(p, "longer than Firestore's 6 KiB document name limit")
	}
	i := strings.LastIndexByte(p, '/')
	return Path{Full: p, Collection: p[:i], ID: p[i+1:], nameBytes: n}, nil
}

// CollectionPath validates p as a collection path.
func CollectionPath(p string) error {
	segs, err := segments(p)
	if err != nil {
		return err
	}
	if len(segs)%2 != 1 {
		return badPath(p, "names a document, not a collection")
	}
	return nil
}

func segments(p string) ([]string, error) {
	if p == "" {
		return nil, badPath(p, "empty")
	}
	segs := strings.Split(p, "/")
	for _, s := range segs {
		if err := checkID(s); err != nil {
			return nil, badPath(p, err.Error())
		}
	}
	return segs, nil
}

func checkID(s string) error {
	switch {
	case s == "":
		return fmt.Errorf("empty segment")
	case s == "." || s == "..":
		return fmt.Errorf("segment %q is reserved", s)
	case len(s) > MaxIDBytes:
		return fmt.Errorf("segment of %d bytes exceeds %d", len(s), MaxIDBytes)
	case !utf8.ValidString(s):
		return fmt.Errorf("segment is not valid UTF-8")
	case len(s) >= 4 && strings.HasPrefix(s, "__") && strings.HasSuffix(s, "__"):
		// Firestore reserves IDs matching __.*__.
		return fmt.Errorf("segment %q is reserved (__.*__)", s)
	}
	return nil
}

// nameSize is Firestore's storage size of a document name: each segment's
// bytes plus one, plus 16.
func nameSize(segs []string) int {
	n := 16
	for _, s := range segs {
		n += len(s) + 1
	}
	return n
}

func badPath(p, why string) error {
	return fmt.Errorf("%w %q: %s", docstore.ErrBadPath, shortPath(p), why)
}

// shortPath keeps error messages readable for paths up to 6 KiB long.
func shortPath(p string) string {
	const show = 80
	if len(p) > show {
		return p[:show] + "..."
	}
	return p
}

// The Firestore adapter stores Data in a string field "json", ExpireAt in a
// timestamp field "expire_at" and a non-empty Tag in a string field "tag";
// the size limits below are Firestore's for that layout, so the embedded
// store refuses the same documents.
const (
	// MaxDataBytes is the emulator's (and Firestore's) cap on one string
	// field value: 1 MiB minus 89 bytes.
	MaxDataBytes = 1<<20 - 89
	maxDocBytes  = 1 << 20
	// Field sizes: name bytes+1, string value bytes+1, timestamp 8.
	jsonFieldBytes   = len("json") + 1 + 1
	expireFieldBytes = len("expire_at") + 1 + 8
	docOverheadBytes = 32
)

var (
	// ErrBadData is returned by Set for a payload that is not a JSON object
	// within Firestore's limits.
	ErrBadData = errors.New("docstore: bad document data")

	minTime = time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)
	maxTime = time.Date(9999, 12, 31, 23, 59, 59, 999999000, time.UTC)
)

// CheckDoc validates d for Set and returns its path and d as stored:
// ExpireAt cut to microseconds in UTC, Firestore's precision.
func CheckDoc(d docstore.Doc) (Path, docstore.Doc, error) {
	p, err := DocPath(d.Path)
	if err != nil {
		return Path{}, docstore.Doc{}, err
	}
	if err := checkData(d.Data); err != nil {
		return Path{}, docstore.Doc{}, fmt.Errorf("%w: %s: %v", ErrBadData, d.Path, err)
	}
	if err := CheckTag(d.Tag, false); err != nil {
		return Path{}, docstore.Doc{}, fmt.Errorf("%w (document %s)", err, shortPath(d.Path))
	}
	size := p.nameBytes + jsonFieldBytes + len(d.Data) + docOverheadBytes
	if d.Tag != "" {
		size += tagBytes(d.Tag)
	}
	if !d.ExpireAt.IsZero() {
		if d.ExpireAt.Before(minTime) || d.ExpireAt.After(maxTime) {
			return Path{}, docstore.Doc{}, fmt.Errorf("%w: %s: expiry %v outside years 1-9999", ErrBadData, d.Path, d.ExpireAt)
		}
		size += expireFieldBytes
	}
	if size > maxDocBytes {
		return Path{}, docstore.Doc{}, fmt.Errorf("%w: %s: document of %d bytes exceeds Firestore's 1 MiB", ErrBadData, d.Path, size)
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
	if len(b) > MaxDataBytes {
		return fmt.Errorf("%d bytes exceed Firestore's %d-byte field limit", len(b), MaxDataBytes)
	}
	if t := bytes.TrimLeft(b, " \t\r\n"); len(t) == 0 || t[0] != '{' {
		return errors.New("not a JSON object")
	}
	// Firestore strings must be UTF-8; json.Valid alone lets bad bytes
	// through inside strings.
	if !utf8.Valid(b) {
		return errors.New("not valid UTF-8")
	}
	if !json.Valid(b) {
		return errors.New("not valid JSON")
	}
	return nil
}

// The Firestore adapter stores Doc.Tag in a string field "tag" that keeps
// its automatic single-field index, so the limits on indexed values apply.
//
// An index entry (at most 7.5 KiB) holds the document name (at most 6 KiB,
// above), the field (name bytes+1, value bytes+1) and 32 bytes: the
// longest name with the longest tag is exactly 7,680 bytes, so a valid
// path and tag never exceed it and it needs no check of its own.
const (
	// MaxTagBytes is Firestore's limit on an indexed string: 1,500 bytes
	// counting a string as its UTF-8 bytes plus one. A longer value is
	// indexed truncated and refused as a query value ("too large to be
	// used in a query", checked against the emulator), so a document with
	// it could never be listed.
	MaxTagBytes      = 1499
	tagFieldOverhead = len("tag") + 1 + 1
)

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

// tagBytes is what a non-empty tag adds to the document's size.
func tagBytes(tag string) int { return tagFieldOverhead + len(tag) }

var (
	// ErrNested is returned by RunTx called with the context of a running
	// transaction: the Firestore client refuses it too, and the embedded
	// store would deadlock on its single writer.
	ErrNested = errors.New("docstore: nested transaction")
	// ErrTxDone is returned by a Tx used after its function returned.
	ErrTxDone = errors.New("docstore: transaction used after its function returned")
)

type txKey struct{}

// WithTx marks ctx as belonging to a running transaction.
func WithTx(ctx context.Context) context.Context { return context.WithValue(ctx, txKey{}, true) }

// InTx reports whether ctx belongs to a running transaction.
func InTx(ctx context.Context) bool { return ctx.Value(txKey{}) != nil }

// Rules enforces, for one attempt of a transaction function, what every
// adapter must refuse. The first violation sticks: RunTx fails with it even
// if fn drops the error, as the Firestore client does for read-after-write,
// so that a swallowed error can never commit half of what fn meant to do.
// Rules is not safe for concurrent use; adapters serialise Tx calls.
type Rules struct {
	wrote, done bool
	err         error
}

// Read checks a Get of paths.
func (r *Rules) Read(paths []string) ([]Path, error) {
	if r.done {
		return nil, ErrTxDone
	}
	if r.wrote {
		return nil, r.Fail(docstore.ErrReadAfterWrite)
	}
	ps := make([]Path, len(paths))
	for i, p := range paths {
		pp, err := DocPath(p)
		if err != nil {
			return nil, r.Fail(err)
		}
		ps[i] = pp
	}
	return ps, nil
}

// Set checks a Set of d and returns d as it will be stored.
func (r *Rules) Set(d docstore.Doc) (Path, docstore.Doc, error) {
	if r.done {
		return Path{}, docstore.Doc{}, ErrTxDone
	}
	p, nd, err := CheckDoc(d)
	if err != nil {
		return Path{}, docstore.Doc{}, r.Fail(err)
	}
	r.wrote = true
	return p, nd, nil
}

// Delete checks a Delete of path.
func (r *Rules) Delete(path string) (Path, error) {
	if r.done {
		return Path{}, ErrTxDone
	}
	p, err := DocPath(path)
	if err != nil {
		return Path{}, r.Fail(err)
	}
	r.wrote = true
	return p, nil
}

// Fail records err as the attempt's outcome unless one is already recorded,
// and returns err.
func (r *Rules) Fail(err error) error {
	if r.err == nil {
		r.err = err
	}
	return err
}

// End closes the attempt and returns what RunTx must report for it: fn's
// own error, else the first recorded violation, else nil (commit).
func (r *Rules) End(fnErr error) error {
	r.done = true
	if fnErr != nil {
		return fnErr
	}
	return r.err
}
