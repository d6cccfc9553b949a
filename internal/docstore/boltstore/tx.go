package boltstore

import (
	"sync"

	"github.com/alpinashop/alpipe/internal/docstore"
	"github.com/alpinashop/alpipe/internal/docstore/internal/firestorerules"
)

// tx buffers its writes until fn returns: reads see the state before the
// transaction (reads come first anyway), and a failed fn leaves nothing in
// the shared bbolt transaction.
type tx struct {
	mu     sync.Mutex // bbolt transactions are not safe for concurrent use
	bs     buckets
	rules  firestorerules.Rules
	writes []write
}

type write struct {
	collection, id string
	tag            string
	val            []byte // nil: delete
}

var _ docstore.Tx = (*tx)(nil)

func (t *tx) Get(paths ...string) ([]docstore.Doc, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	ps, err := t.rules.Read(paths)
	if err != nil {
		return nil, err
	}
	docs := make([]docstore.Doc, len(ps))
	for i, p := range ps {
		v := t.bs.docs.Get(docKey(p.Collection, p.ID))
		if v == nil {
			docs[i] = docstore.Doc{Path: p.Full}
			continue
		}
		if docs[i], err = decode(p.Full, v); err != nil {
			return nil, t.rules.Fail(err)
		}
	}
	return docs, nil
}

func (t *tx) Set(d docstore.Doc) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	p, nd, err := t.rules.Set(d)
	if err != nil {
		return err
	}
	t.writes = append(t.writes, write{collection: p.Collection, id: p.ID, tag: nd.Tag, val: encode(nd)})
	return nil
}

func (t *tx) Delete(path string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	p, err := t.rules.Delete(path)
	if err != nil {
		return err
	}
	t.writes = append(t.writes, write{collection: p.Collection, id: p.ID})
	return nil
}

func (t *tx) end(fnErr error) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.rules.End(fnErr)
}

// apply writes in order, so the last write to a document wins, as in a
// Firestore commit; each write moves the document's tag index key with it.
func (t *tx) apply() error {
	for _, w := range t.writes {
		var err error
		if w.val == nil {
			err = t.bs.remove(w.collection, w.id)
		} else {
			err = t.bs.put(w.collection, w.id, w.tag, w.val)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
