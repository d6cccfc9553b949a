package ledger

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/alpinashop/alpipe/internal/docstore"
)

const (
	recordCollection = "ledger"
	md5Collection    = "ledger_md5"
	// objectCollection holds, per object name, its newest DONE generation.
	objectCollection = "ledger_objects"
	// maxIDBytes is Firestore's document ID limit.
	maxIDBytes = 1500
)

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

func encode(path string, v any) (docstore.Doc, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return docstore.Doc{}, fmt.Errorf("encode %s: %w", path, err)
	}
	return docstore.Doc{Path: path, Data: b}, nil
}

// decodeRecord returns the record in d, or the zero Record if d is missing.
func decodeRecord(d docstore.Doc) (Record, bool, error) {
	if !d.Exists {
		return Record{}, false, nil
	}
	var r Record
	if err := json.Unmarshal(d.Data, &r); err != nil {
		return Record{}, false, fmt.Errorf("decode %s: %w", d.Path, err)
	}
	return r, true, nil
}

func decodeIndex(d docstore.Doc) (index, bool, error) {
	if !d.Exists {
		return index{}, false, nil
	}
	var ix index
	if err := json.Unmarshal(d.Data, &ix); err != nil {
		return index{}, false, fmt.Errorf("decode %s: %w", d.Path, err)
	}
	return ix, true, nil
}
