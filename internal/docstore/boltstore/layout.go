package boltstore

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/alpinashop/alpipe/internal/docstore"
)

// File layout. Bucket "docs" maps collection + 0xFF + id to a value; 0xFF
// never occurs in UTF-8, so the direct children of a collection are one
// contiguous key range, sorted by ID in byte order as Firestore sorts them,
// and never interleaved with deeper documents.
//
// Value: version byte, flags byte, [expiry as int64 Unix microseconds,
// big-endian, if flagExpire], then the JSON payload.
var (
	bucketDocs = []byte("docs")
	bucketMeta = []byte("meta")
	keyFormat  = []byte("format")
)

const (
	formatVersion = 1
	sep           = 0xFF
	flagExpire    = 1
)

func initLayout(btx *bolt.Tx) error {
	meta, err := btx.CreateBucketIfNotExists(bucketMeta)
	if err != nil {
		return err
	}
	if v := meta.Get(keyFormat); v != nil {
		if len(v) != 1 || v[0] != formatVersion {
			return fmt.Errorf("unknown docstore file format %v (this build reads %d)", v, formatVersion)
		}
	} else if err := meta.Put(keyFormat, []byte{formatVersion}); err != nil {
		return err
	}
	_, err = btx.CreateBucketIfNotExists(bucketDocs)
	return err
}

func docKey(collection, id string) []byte {
	k := make([]byte, 0, len(collection)+1+len(id))
	k = append(k, collection...)
	k = append(k, sep)
	return append(k, id...)
}

func encode(d docstore.Doc) []byte {
	v := make([]byte, 2, 2+8+len(d.Data))
	v[0] = formatVersion
	if !d.ExpireAt.IsZero() {
		v[1] = flagExpire
		v = binary.BigEndian.AppendUint64(v, uint64(d.ExpireAt.UnixMicro()))
	}
	return append(v, d.Data...)
}

// decode copies out of v, which bbolt owns only during the transaction.
func decode(path string, v []byte) (docstore.Doc, error) {
	if len(v) < 2 || v[0] != formatVersion {
		return docstore.Doc{}, fmt.Errorf("document %s: corrupt value", path)
	}
	d := docstore.Doc{Path: path, Exists: true}
	rest := v[2:]
	if v[1]&flagExpire != 0 {
		if len(rest) < 8 {
			return docstore.Doc{}, fmt.Errorf("document %s: corrupt expiry", path)
		}
		d.ExpireAt = time.UnixMicro(int64(binary.BigEndian.Uint64(rest))).UTC()
		rest = rest[8:]
	}
	d.Data = bytes.Clone(rest)
	return d, nil
}

func list(b *bolt.Bucket, collection string) ([]docstore.Doc, error) {
	prefix := docKey(collection, "")
	docs := []docstore.Doc{}
	c := b.Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		d, err := decode(collection+"/"+string(k[len(prefix):]), v)
		if err != nil {
			return nil, err
		}
		docs = append(docs, d)
	}
	return docs, nil
}
