package local

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/alpinashop/alpipe/internal/logging"
)

func TestClaimClock(t *testing.T) {
	wall, virtual := WallClock(), VirtualClock(time.Date(2026, 3, 14, 17, 0, 0, 0, time.UTC))
	tests := []struct {
		name    string
		setup   func(dir string) // what the folder holds before
		clock   *Clock
		wantErr string // "" for accepted
	}{
		{name: "new folder, wall clock", setup: func(string) {}, clock: wall},
		{name: "new folder, virtual clock", setup: func(string) {}, clock: virtual},
		{name: "virtual over virtual", setup: mark("virtual"), clock: virtual},
		{name: "wall over wall", setup: mark("wall"), clock: wall},
		{name: "virtual over wall is refused", setup: mark("wall"), clock: virtual, wantErr: "was written on the wall clock and this server runs on the virtual clock"},
		{name: "wall over virtual is refused", setup: mark("virtual"), clock: wall, wantErr: "was written on the virtual clock and this server runs on the wall clock"},
		{name: "unmarked data of an earlier version is wall-clock data", setup: file("warehouse.duckdb"), clock: virtual, wantErr: "written on the wall clock"},
		{name: "unmarked data accepted by the wall clock", setup: file("warehouse.duckdb"), clock: wall},
		{name: "a lock alone is no data", setup: file(lockName), clock: virtual},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			tt.setup(dir)
			err := claimClock(dir, tt.clock)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("claimClock: %v", err)
				}
				b, _ := os.ReadFile(filepath.Join(dir, clockMarkName))
				if got := strings.TrimSpace(string(b)); got != clockKind(tt.clock) {
					t.Errorf("mark = %q, want %q", got, clockKind(tt.clock))
				}
				return
			}
			var mismatch *ClockMismatchError
			if !errors.As(err, &mismatch) || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), "pass --data with another folder") {
				t.Fatalf("claimClock error = %v, want a ClockMismatchError containing %q and the fix", err, tt.wantErr)
			}
		})
	}
}

func mark(kind string) func(string) {
	return file(clockMarkName, kind+"\n")
}

func file(name string, content ...string) func(string) {
	return func(dir string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(strings.Join(content, "")), 0o644); err != nil {
			panic(err)
		}
	}
}

// TestStartRefusesAFolderOfTheOtherClock: the README's order of steps ran a
// wall-clock serve on .local and then a virtual-clock one on the same
// folder, whose dashboard then read "-261d ago".
func TestStartRefusesAFolderOfTheOtherClock(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, clockMarkName), []byte("wall\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Start(context.Background(), Options{Addr: "127.0.0.1:0", DataDir: dir, Clock: VirtualClock(time.Date(2026, 3, 14, 17, 0, 0, 0, time.UTC)), Logger: logging.Discard()})
	var mismatch *ClockMismatchError
	if !errors.As(err, &mismatch) {
		t.Fatalf("Start on a wall-clock folder with a virtual clock: %v, want a ClockMismatchError", err)
	}
	// The refusal released the folder: a wall-clock server may use it.
	if _, err := lockDataDir(dir); err != nil {
		t.Errorf("folder still locked after the refusal: %v", err)
	}
}
