package boltstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	bolt "go.etcd.io/bbolt"

	"github.com/alpinashop/alpipe/internal/docstore"
	"github.com/alpinashop/alpipe/internal/docstore/docstoretest"
)

func TestConformance(t *testing.T) {
	docstoretest.Run(t, func(t *testing.T) docstore.Store { return newStore(t) })
}

// newStore opens a store in a fresh file, closed when the test ends.
func newStore(t *testing.T) *Store { return openTemp(t, filepath.Join(t.TempDir(), "docs.db")) }

func openTemp(t *testing.T, path string) *Store {
	t.Helper()
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	return s
}

func setDoc(path string) func(context.Context, docstore.Tx) error {
	return func(_ context.Context, tx docstore.Tx) error {
		return tx.Set(docstore.Doc{Path: path, Data: []byte(`{}`)})
	}
}

func exists(t *testing.T, s docstore.Store, path string) (ok bool) {
	t.Helper()
	if err := s.RunTx(t.Context(), func(_ context.Context, tx docstore.Tx) error {
		docs, err := tx.Get(path)
		ok = err == nil && docs[0].Exists
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return ok
}

// TestCloseAndReopen: Close is idempotent, a closed store refuses RunTx
// and List, and what it committed survives into the next Open.
func TestCloseAndReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "docs.db")
	s := openTemp(t, path)
	if err := s.RunTx(t.Context(), setDoc("a/b")); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close = %v", err)
	}
	if err := s.RunTx(t.Context(), setDoc("a/c")); !errors.Is(err, ErrClosed) {
		t.Errorf("RunTx after Close = %v, want ErrClosed", err)
	}
	if _, err := s.List(t.Context(), "a"); !errors.Is(err, ErrClosed) {
		t.Errorf("List after Close = %v, want ErrClosed", err)
	}
	if !exists(t, openTemp(t, path), "a/b") {
		t.Error("document lost across Close and Open")
	}
}

func TestSecondOpenFailsFast(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "docs.db")
	openTemp(t, path)
	start := time.Now()
	if _, err := Open(path); err == nil || !strings.Contains(err.Error(), "locked") {
		t.Errorf("second Open = %v, want a locked-file error", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("second Open took %v", d)
	}
}

func TestPanicReachesCaller(t *testing.T) {
	s := newStore(t)
	func() {
		defer func() {
			if p := recover(); p == nil || !strings.Contains(fmt.Sprint(p), "kaput") {
				t.Errorf("recovered %v, want the function's panic", p)
			}
		}()
		s.RunTx(t.Context(), func(ctx context.Context, tx docstore.Tx) error {
			setDoc("p/x")(ctx, tx)
			panic("kaput")
		})
	}()
	if exists(t, s, "p/x") {
		t.Error("a panicking function's write was committed")
	}
}

// blockCommitter parks the committer inside a transaction until release is
// called (once or more), so that the next transactions queue up and share
// one commit.
func blockCommitter(t *testing.T, s docstore.Store) (release func()) {
	t.Helper()
	running, unblock, done := make(chan struct{}), make(chan struct{}), make(chan error)
	go func() {
		done <- s.RunTx(context.Background(), func(ctx context.Context, tx docstore.Tx) error {
			close(running)
			<-unblock
			return setDoc("block/x")(ctx, tx)
		})
	}()
	<-running
	return sync.OnceFunc(func() {
		close(unblock)
		if err := <-done; err != nil {
			t.Errorf("blocking transaction: %v", err)
		}
	})
}

func TestBatchIsolatesFailures(t *testing.T) {
	s := newStore(t)
	release := blockCommitter(t, s)
	errBoom := errors.New("boom")
	var wg sync.WaitGroup
	var failed, ok, reader error
	var sawOK bool
	queued := make(chan struct{}, 3)
	wg.Go(func() {
		queued <- struct{}{}
		failed = s.RunTx(t.Context(), func(ctx context.Context, tx docstore.Tx) error {
			setDoc("b/failed")(ctx, tx)
			return errBoom
		})
	})
	wg.Go(func() { queued <- struct{}{}; ok = s.RunTx(t.Context(), setDoc("b/ok")) })
	<-queued
	<-queued
	time.Sleep(50 * time.Millisecond) // let both reach the queue
	wg.Go(func() {
		reader = s.RunTx(t.Context(), func(_ context.Context, tx docstore.Tx) error {
			docs, err := tx.Get("b/ok")
			sawOK = err == nil && docs[0].Exists
			return err
		})
	})
	time.Sleep(50 * time.Millisecond)
	release()
	wg.Wait()
	if !errors.Is(failed, errBoom) || ok != nil || reader != nil {
		t.Fatalf("results: failed=%v ok=%v reader=%v", failed, ok, reader)
	}
	if exists(t, s, "b/failed") || !exists(t, s, "b/ok") {
		t.Error("a failing function in a batch leaked its write or sank another's")
	}
	if !sawOK {
		t.Error("a later transaction did not see an earlier one's write")
	}
}

func TestCancelWhileQueued(t *testing.T) {
	s := newStore(t)
	release := blockCommitter(t, s)
	defer release()
	ctx, cancel := context.WithCancel(t.Context())
	ran := false
	errc := make(chan error)
	go func() {
		errc <- s.RunTx(ctx, func(ctx context.Context, tx docstore.Tx) error {
			ran = true
			return setDoc("q/x")(ctx, tx)
		})
	}()
	time.Sleep(20 * time.Millisecond)
	cancel()
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("RunTx = %v, want context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a canceled caller stayed blocked behind a running transaction")
	}
	release()
	if ran || exists(t, s, "q/x") {
		t.Error("an abandoned transaction ran")
	}
}

// TestRefusesUnknownFormat: a file of another format, including format 1
// (before tags), is refused by name rather than misread.
func TestRefusesUnknownFormat(t *testing.T) {
	for _, format := range [][]byte{{formatVersion + 1}, {0}, {1}, {formatVersion, 0}} {
		path := filepath.Join(t.TempDir(), "x.db")
		db, err := bolt.Open(path, 0o600, nil)
		if err == nil {
			err = errors.Join(db.Update(func(btx *bolt.Tx) error {
				meta, err := btx.CreateBucket(bucketMeta)
				if err != nil {
					return err
				}
				return meta.Put(keyFormat, format)
			}), db.Close())
		}
		if err != nil {
			t.Fatal(err)
		}
		s, err := Open(path)
		if err == nil {
			s.Close()
		}
		if err == nil || !strings.Contains(err.Error(), "unknown docstore file format") {
			t.Errorf("Open of format %v = %v, want an unknown format error", format, err)
		}
	}
}

// TestRefusesFormat1Value: a format 1 value, which a file upgraded in place
// by an earlier build still holds, is refused by name, not called corrupt.
func TestRefusesFormat1Value(t *testing.T) {
	s := newStore(t)
	if err := s.db.Update(func(btx *bolt.Tx) error {
		return btx.Bucket(bucketDocs).Put(docKey("old", "plain"), append([]byte{1, 0}, `{}`...))
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.List(t.Context(), "old"); err == nil ||
		!strings.Contains(err.Error(), "old/plain: value of docstore format 1 (before tags)") {
		t.Errorf("List of a format 1 value = %v, want it refused by name", err)
	}
}

// TestTagIndexFollowsDocs runs random writes, some in failing
// transactions, and checks that the index holds exactly one key per tagged
// document, the one of its current tag.
func TestTagIndexFollowsDocs(t *testing.T) {
	s := newStore(t)
	rng := rand.New(rand.NewPCG(1, 2))
	paths := []string{"c/a", "c/b", "c/c", "c/a/s/x", "d/a", "c2/a"}
	tags := []string{"", "t1", "t2", "t1/é"}
	errFail := errors.New("fail")
	for i := range 300 {
		fail := rng.IntN(5) == 0
		err := s.RunTx(t.Context(), func(_ context.Context, tx docstore.Tx) error {
			for range 1 + rng.IntN(4) {
				p := paths[rng.IntN(len(paths))]
				var err error
				if rng.IntN(4) == 0 {
					err = tx.Delete(p)
				} else {
					err = tx.Set(docstore.Doc{Path: p, Data: []byte(`{}`), Tag: tags[rng.IntN(len(tags))]})
				}
				if err != nil {
					return err
				}
			}
			if fail {
				return errFail
			}
			return nil
		})
		if err != nil && !(fail && errors.Is(err, errFail)) {
			t.Fatalf("transaction %d: %v", i, err)
		}
	}
	var want, got []string
	err := s.db.View(func(btx *bolt.Tx) error {
		bs := bucketsOf(btx)
		if err := bs.docs.ForEach(func(k, v []byte) error {
			i := bytes.IndexByte(k, sep)
			h, err := parse(string(k), v)
			if err == nil && len(h.tag) > 0 {
				want = append(want, fmt.Sprintf("%s|%s|%s", k[:i], h.tag, k[i+1:]))
			}
			return err
		}); err != nil {
			return err
		}
		return bs.tags.ForEach(func(k, _ []byte) error {
			got = append(got, string(bytes.ReplaceAll(k, []byte{sep}, []byte("|"))))
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(want) == 0 {
		t.Fatal("no tagged documents left: the sequence proves nothing")
	}
	if diff := cmp.Diff(want, got, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
		t.Errorf("tag index (-want +got):\n%s", diff)
	}
}

// TestListTagReadsOnlyTagged shows that ListTag does not walk the
// collection: a corrupt untagged document breaks List but not ListTag.
func TestListTagReadsOnlyTagged(t *testing.T) {
	s := newStore(t)
	err := s.RunTx(t.Context(), func(_ context.Context, tx docstore.Tx) error {
		for i := range 50 {
			if err := tx.Set(docstore.Doc{Path: fmt.Sprintf("c/%02d", i), Data: []byte(`{}`)}); err != nil {
				return err
			}
		}
		return tx.Set(docstore.Doc{Path: "c/25x", Data: []byte(`{}`), Tag: "g"})
	})
	if err == nil {
		err = s.db.Update(func(btx *bolt.Tx) error { return btx.Bucket(bucketDocs).Put(docKey("c", "24"), []byte{9}) })
	}
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.List(t.Context(), "c"); err == nil {
		t.Fatal("List read past a corrupt document: the check below proves nothing")
	}
	docs, err := s.ListTag(t.Context(), "c", "g", 0)
	if err != nil {
		t.Fatalf("ListTag read an untagged document: %v", err)
	}
	if len(docs) != 1 || docs[0].Path != "c/25x" {
		t.Errorf("ListTag = %+v, want c/25x", docs)
	}
}
