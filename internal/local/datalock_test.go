package local

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/alpinashop/alpipe/internal/ledger"
	"github.com/alpinashop/alpipe/internal/localapi"
	"github.com/alpinashop/alpipe/internal/logging"
)

// TestSecondServeOnTheDataFolder starts a second server on the data folder
// of the running one: it must name the holder instead of failing inside
// DuckDB with a lock error about a build-cache path.
func TestSecondServeOnTheDataFolder(t *testing.T) {
	_, err := Start(context.Background(), Options{Addr: "127.0.0.1:0", DataDir: srv.data})
	if err == nil {
		t.Fatal("a second server started on the same data folder")
	}
	want := "another alpipe serve (PID " + strconv.Itoa(os.Getpid()) + ") uses " + srv.data
	if !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not say %q", err, want)
	}
	var busy *DataDirInUseError
	if !errors.As(err, &busy) || busy.PID != os.Getpid() {
		t.Errorf("error %#v, want a DataDirInUseError with PID %d", err, os.Getpid())
	}
}

// TestLockDataDir locks a new folder, and one holding the lock file of a
// server that crashed: the PID in it is stale and nobody holds the lock,
// so the folder is free.
func TestLockDataDir(t *testing.T) {
	crashed := t.TempDir()
	if err := os.WriteFile(filepath.Join(crashed, lockName), []byte("999999999\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{filepath.Join(t.TempDir(), ".local"), crashed} {
		first, err := lockDataDir(dir)
		if err != nil {
			t.Fatalf("lock %s: %v", dir, err)
		}
		b, err := os.ReadFile(filepath.Join(dir, lockName))
		if err != nil {
			t.Fatal(err)
		}
		if got, want := string(b), strconv.Itoa(os.Getpid())+"\n"; got != want {
			t.Errorf("lock file holds %q, want %q", got, want)
		}
		var busy *DataDirInUseError
		if second, err := lockDataDir(dir); !errors.As(err, &busy) {
			second.Close()
			t.Fatalf("second lock: %v, want a DataDirInUseError", err)
		}
		// A process that dies loses its lock: closing the file is the same.
		if err := first.Close(); err != nil {
			t.Fatal(err)
		}
		again, err := lockDataDir(dir)
		if err != nil {
			t.Fatalf("lock after the holder went away: %v", err)
		}
		again.Close()
	}
}

// TestRestartTakesOverADeadServesLeases: a serve killed mid-ingest (kill -9)
// leaves its ledger lease behind; the next serve on the folder holds the
// folder's lock, which proves that holder dead, so the file is taken over
// at once instead of after LEDGER_LEASE.
func TestRestartTakesOverADeadServesLeases(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	t0 := time.Date(2026, 3, 14, 17, 0, 0, 0, time.UTC)
	key := ledger.Key{Bucket: localapi.LandingBucket, Object: "exportaciones/2026/03/14/pedidos.csv", Generation: 1}
	first, err := Start(ctx, Options{Addr: "127.0.0.1:0", DataDir: dir, Clock: VirtualClock(t0), Logger: logging.Discard()})
	if err != nil {
		t.Fatal(err)
	}
	killed, err := first.App.Ledger.Claim(ctx, key, "", "killed", t0)
	if err != nil || killed.Decision != ledger.Proceed {
		t.Fatalf("first serve's claim: %v, %v", killed.Decision, err)
	}
	// Shutdown stands in for kill -9: it leaves the lease as it is.
	if err := first.Shutdown("killed"); err != nil {
		t.Fatal(err)
	}

	later := t0.Add(time.Minute)
	second, err := Start(ctx, Options{Addr: "127.0.0.1:0", DataDir: dir, Clock: VirtualClock(later), Logger: logging.Discard()})
	if err != nil {
		t.Fatal(err)
	}
	defer second.Shutdown("test done")
	if err := releaseDeadLeases(ctx, second.App.Ledger, later, logging.Discard()); err != nil {
		t.Fatal(err)
	}
	next, err := second.App.Ledger.Claim(ctx, key, "", "next", later)
	if err != nil {
		t.Fatal(err)
	}
	if next.Decision != ledger.Proceed || next.Previous == nil || next.Previous.Owner != "killed" {
		t.Fatalf("claim after the restart: %v over %+v; want proceed over the killed serve's attempt", next.Decision, next.Previous)
	}
}
