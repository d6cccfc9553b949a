package firestorerules

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/alpinashop/alpipe/internal/docstore"
)

// The Firestore adapter stores Data in a string field "json", ExpireAt in a
// timestamp field "expire_at" and a non-empty Tag in a string field "tag"
// (tag.go); the size limits below are Firestore's
// for that layout, so the embedded store refuses the same documents.
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
