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
// big-endian, if flagExpire], [tag length as uint16 big-endian and the tag,
// if flagTag], then the JSON payload.
//
// Bucket "tags" indexes the tagged documents for ListTag: key collection +
// 0xFF + tag + 0xFF + id, empty value, so one collection's documents with
// one tag are again a contiguous range sorted by ID. The commit that writes
// a document updates its index key, so the two buckets never disagree.
//
// Format 1 (before tags) is refused: a format 1 file like any unknown
// format, and a format 1 value by name, as earlier builds upgraded format 1
// files in place and left their values as they were. Such a folder also
// holds stream state older than layout 3, which no build reads any more,
// so removing the folder loses nothing a restart could use.
var (
	bucketDocs = []byte("docs")
	bucketTags = []byte("tags")
	bucketMeta = []byte("meta")
	keyFormat  = []byte("format")
)

const (
	formatVersion = 2
	sep           = 0xFF
	flagExpire    = 1
	flagTag       = 2
)

func initLayout(btx *bolt.Tx) error {
	meta, err := btx.CreateBucketIfNotExists(bucketMeta)
	if err != nil {
		return err
	}
	if v := meta.Get(keyFormat); v != nil && !bytes.Equal(v, []byte{formatVersion}) {
		return fmt.Errorf("unknown docstore file format %v (this build reads %d)", v, formatVersion)
	}
	for _, b := range [][]byte{bucketDocs, bucketTags} {
		if _, err := btx.CreateBucketIfNotExists(b); err != nil {
			return err
		}
	}
	return meta.Put(keyFormat, []byte{formatVersion})
}

// buckets are the bbolt buckets a transaction works in.
type buckets struct{ docs, tags *bolt.Bucket }

func bucketsOf(btx *bolt.Tx) buckets {
	return buckets{docs: btx.Bucket(bucketDocs), tags: btx.Bucket(bucketTags)}
}

func docKey(collection, id string) []byte {
	return append(append(append(make([]byte, 0, len(collection)+1+len(id)), collection...), sep), id...)
}

func tagKey(collection, tag, id string) []byte { return docKey(collection+string([]byte{sep})+tag, id) }

func encode(d docstore.Doc) []byte {
	v := make([]byte, 2, 2+8+2+len(d.Tag)+len(d.Data))
	v[0] = formatVersion
	if !d.ExpireAt.IsZero() {
		v[1] |= flagExpire
		v = binary.BigEndian.AppendUint64(v, uint64(d.ExpireAt.UnixMicro()))
	}
	if d.Tag != "" {
		// A tag fits in uint16: at most firestorerules.MaxTagBytes.
		v[1] |= flagTag
		v = binary.BigEndian.AppendUint16(v, uint16(len(d.Tag)))
		v = append(v, d.Tag...)
	}
	return append(v, d.Data...)
}

// header is a value split into its parts; the slices alias the value.
type header struct{ expire, tag, data []byte } // expire: 8 bytes, or nil

func parse(path string, v []byte) (header, error) {
	if len(v) >= 2 && v[0] == 1 {
		return header{}, fmt.Errorf("document %s: value of docstore format 1 (before tags); "+
			"this build reads %d: remove the data folder (alpipe serve --data)",
			path, formatVersion)
	}
	if len(v) < 2 || v[0] != formatVersion {
		return header{}, fmt.Errorf("document %s: corrupt value", path)
	}
	var h header
	rest := v[2:]
	if v[1]&flagExpire != 0 {
		if len(rest) < 8 {
			return header{}, fmt.Errorf("document %s: corrupt expiry", path)
		}
		h.expire, rest = rest[:8], rest[8:]
	}
	if v[1]&flagTag != 0 {
		if len(rest) < 2 || len(rest) < 2+int(binary.BigEndian.Uint16(rest)) {
			return header{}, fmt.Errorf("document %s: corrupt tag", path)
		}
		n := int(binary.BigEndian.Uint16(rest))
		h.tag, rest = rest[2:2+n], rest[2+n:]
	}
	h.data = rest
	return h, nil
}

// decode copies out of v, which bbolt owns only during the transaction.
func decode(path string, v []byte) (docstore.Doc, error) {
	h, err := parse(path, v)
	if err != nil {
		return docstore.Doc{}, err
	}
	d := docstore.Doc{Path: path, Tag: string(h.tag), Data: bytes.Clone(h.data), Exists: true}
	if h.expire != nil {
		d.ExpireAt = time.UnixMicro(int64(binary.BigEndian.Uint64(h.expire))).UTC()
	}
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

// listTag walks the index range of collection and tag, reading each
// document it names: the cost follows the documents returned, not the
// collection's size.
func listTag(bs buckets, collection, tag string, limit int) ([]docstore.Doc, error) {
	prefix := tagKey(collection, tag, "")
	docs := []docstore.Doc{}
	c := bs.tags.Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix) && (limit <= 0 || len(docs) < limit); k, _ = c.Next() {
		id := string(k[len(prefix):])
		path := collection + "/" + id
		v := bs.docs.Get(docKey(collection, id))
		if v == nil {
			return nil, fmt.Errorf("tag index names %s, which does not exist", path)
		}
		d, err := decode(path, v)
		if err != nil {
			return nil, err
		}
		if d.Tag != tag {
			return nil, fmt.Errorf("tag index lists %s under a tag it does not carry", path)
		}
		docs = append(docs, d)
	}
	return docs, nil
}

// put stores v at collection/id, which remove has cleared, with its index
// key if tagged.
func (bs buckets) put(collection, id, tag string, v []byte) error {
	if err := bs.docs.Put(docKey(collection, id), v); err != nil || tag == "" {
		return err
	}
	return bs.tags.Put(tagKey(collection, tag, id), nil)
}

// remove deletes collection/id and its index key.
func (bs buckets) remove(collection, id string) error {
	key := docKey(collection, id)
	old := bs.docs.Get(key)
	if old == nil {
		return nil
	}
	h, err := parse(collection+"/"+id, old)
	if err != nil {
		return err
	}
	if len(h.tag) > 0 {
		if err := bs.tags.Delete(tagKey(collection, string(h.tag), id)); err != nil {
			return err
		}
	}
	return bs.docs.Delete(key)
}
