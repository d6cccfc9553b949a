package local

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
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

func TestLockDataDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".local")
	first, err := lockDataDir(dir)
	if err != nil {
		t.Fatal(err)
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

// TestLockDataDirAfterCrash finds the lock file of a server that crashed:
// the PID in it is stale and nobody holds the lock, so the folder is free.
func TestLockDataDirAfterCrash(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, lockName), []byte("999999999\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := lockDataDir(dir)
	if err != nil {
		t.Fatalf("lock over a crashed server's file: %v", err)
	}
	defer f.Close()
	b, err := os.ReadFile(filepath.Join(dir, lockName))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(b), strconv.Itoa(os.Getpid())+"\n"; got != want {
		t.Errorf("lock file holds %q, want %q", got, want)
	}
}
