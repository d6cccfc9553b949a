package boltstore_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alpinashop/alpipe/internal/docstore"
	"github.com/alpinashop/alpipe/internal/docstore/boltstore"
)

func setDoc(path string) func(context.Context, docstore.Tx) error {
	return func(_ context.Context, tx docstore.Tx) error {
		return tx.Set(docstore.Doc{Path: path, Data: []byte(`{}`)})
	}
}

func exists(t *testing.T, s docstore.Store, path string) bool {
	t.Helper()
	var ok bool
	if err := s.RunTx(t.Context(), func(_ context.Context, tx docstore.Tx) error {
		docs, err := tx.Get(path)
		if err == nil {
			ok = docs[0].Exists
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return ok
}

func TestSurvivesReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "docs.db")
	s, err := boltstore.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.RunTx(t.Context(), setDoc("a/b")); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = boltstore.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !exists(t, s, "a/b") {
		t.Error("document lost across Close and Open")
	}
}

func TestSecondOpenFailsFast(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "docs.db")
	s, err := boltstore.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	start := time.Now()
	_, err = boltstore.Open(path)
	if err == nil || !strings.Contains(err.Error(), "locked") {
		t.Errorf("second Open = %v, want a locked-file error", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("second Open took %v", d)
	}
}

func TestClosed(t *testing.T) {
	s := newStore(t)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close = %v", err)
	}
	if err := s.RunTx(t.Context(), setDoc("a/b")); !errors.Is(err, boltstore.ErrClosed) {
		t.Errorf("RunTx after Close = %v, want ErrClosed", err)
	}
	if _, err := s.List(t.Context(), "a"); !errors.Is(err, boltstore.ErrClosed) {
		t.Errorf("List after Close = %v, want ErrClosed", err)
	}
}

func TestPanicReachesCaller(t *testing.T) {
	s := newStore(t)
	func() {
		defer func() {
			p := recover()
			if p == nil || !strings.Contains(fmt.Sprint(p), "kaput") {
				t.Errorf("recovered %v, want the function's panic", p)
			}
		}()
		s.RunTx(t.Context(), func(_ context.Context, tx docstore.Tx) error {
			tx.Set(docstore.Doc{Path: "p/x", Data: []byte(`{}`)})
			panic("kaput")
		})
	}()
	if exists(t, s, "p/x") {
		t.Error("a panicking function's write was committed")
	}
}

// blockCommitter parks the committer inside a transaction until release is
// called (once or more), so that the next transactions queue up and share one commit.
func blockCommitter(t *testing.T, s docstore.Store) (release func()) {
	t.Helper()
	running, unblock := make(chan struct{}), make(chan struct{})
	done := make(chan error)
	go func() {
		done <- s.RunTx(context.Background(), func(_ context.Context, tx docstore.Tx) error {
			close(running)
			<-unblock
			return tx.Set(docstore.Doc{Path: "block/x", Data: []byte(`{}`)})
		})
	}()
	<-running
	var once sync.Once
	return func() {
		once.Do(func() {
			close(unblock)
			if err := <-done; err != nil {
				t.Errorf("blocking transaction: %v", err)
			}
		})
	}
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
		failed = s.RunTx(t.Context(), func(_ context.Context, tx docstore.Tx) error {
			tx.Set(docstore.Doc{Path: "b/failed", Data: []byte(`{}`)})
			return errBoom
		})
	})
	wg.Go(func() { queued <- struct{}{}; ok = s.RunTx(t.Context(), setDoc("b/ok")) })
	for range 2 {
		<-queued
	}
	time.Sleep(50 * time.Millisecond) // let both reach the queue
	wg.Go(func() {
		reader = s.RunTx(t.Context(), func(_ context.Context, tx docstore.Tx) error {
			docs, err := tx.Get("b/ok")
			if err == nil {
				sawOK = docs[0].Exists
			}
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
		errc <- s.RunTx(ctx, func(_ context.Context, tx docstore.Tx) error {
			ran = true
			return tx.Set(docstore.Doc{Path: "q/x", Data: []byte(`{}`)})
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
