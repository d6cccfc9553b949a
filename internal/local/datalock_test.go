package local

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/clock"
	"github.com/alpinashop/alpipe/internal/ledger"
	"github.com/alpinashop/alpipe/internal/localapi"
)

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
	key := ledger.Key{Bucket: localapi.LandingBucket, Object: "exportaciones/2026/03/14/pedidos.csv", Generation: 1}
	first, err := Start(ctx, options(dir, t0))
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
	second, err := Start(ctx, options(dir, later))
	if err != nil {
		t.Fatal(err)
	}
	defer second.Shutdown("test done")
	next, err := second.App.Ledger.Claim(ctx, key, "", "next", later)
	if err != nil {
		t.Fatal(err)
	}
	if next.Decision != ledger.Proceed || next.Previous == nil || next.Previous.Owner != "killed" {
		t.Fatalf("claim after the restart: %v over %+v; want proceed over the killed serve's attempt", next.Decision, next.Previous)
	}
}

func TestClaimClock(t *testing.T) {
	start := time.Date(2026, 3, 14, 17, 0, 0, 0, time.UTC)
	wall, virtual := clock.Wall(), func() *clock.Local { return clock.Virtual(start) }
	tests := []struct {
		name    string
		setup   func(dir string) // what the folder holds before
		clock   *clock.Local
		wantErr string    // "" for accepted
		wantNow time.Time // a virtual clock's time after the claim; zero: start
	}{
		{name: "new folder, wall clock", setup: func(string) {}, clock: wall},
		{name: "new folder, virtual clock", setup: func(string) {}, clock: virtual()},
		{name: "virtual over virtual", setup: mark("virtual"), clock: virtual()},
		{name: "wall over wall", setup: mark("wall"), clock: wall},
		{name: "virtual over wall is refused", setup: mark("wall"), clock: virtual(), wantErr: "was written on the wall clock and this server runs on the virtual clock"},
		{name: "wall over virtual is refused", setup: mark("virtual"), clock: wall, wantErr: "was written on the virtual clock and this server runs on the wall clock"},
		{name: "unmarked data of an earlier version is wall-clock data", setup: file("warehouse.duckdb"), clock: virtual(), wantErr: "written on the wall clock"},
		{name: "unmarked data accepted by the wall clock", setup: file("warehouse.duckdb"), clock: wall},
		{name: "a lock alone is no data", setup: file(lockName), clock: virtual()},
		{name: "virtual resumes from the kept time", setup: mark("virtual\n2026-03-14T18:25:00Z"), clock: virtual(), wantNow: start.Add(85 * time.Minute)},
		{name: "a later start moves on from the kept time", setup: mark("virtual\n2026-03-14T16:00:00Z"), clock: virtual()},
		{name: "an unreadable kept time is refused", setup: mark("virtual\n18:25"), clock: virtual(), wantErr: "data folder clock mark"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			tt.setup(dir)
			err := claimClock(dir, tt.clock)
			if tt.wantErr != "" {
				// A mismatch says the fix; a bad mark is no mismatch.
				var mismatch *ClockMismatchError
				bad := err == nil || !strings.Contains(err.Error(), tt.wantErr)
				if !strings.HasPrefix(tt.wantErr, "data folder clock mark") && (!errors.As(err, &mismatch) || !strings.Contains(err.Error(), "pass --data with another folder")) || bad {
					t.Fatalf("claimClock error = %v, want one containing %q (a ClockMismatchError with the fix)", err, tt.wantErr)
				}
				return
			} else if err != nil {
				t.Fatalf("claimClock: %v", err)
			}
			b, _ := os.ReadFile(filepath.Join(dir, clockMarkName))
			want := clockKind(tt.clock) + "\n"
			if now := tt.wantNow; tt.clock.Virtual() {
				if now.IsZero() {
					now = start
				}
				if got := tt.clock.Now(); !got.Equal(now) {
					t.Errorf("clock reads %v, want %v", got, now)
				}
				want += now.Format(time.RFC3339Nano) + "\n"
			}
			if diff := cmp.Diff(want, string(b)); diff != "" {
				t.Errorf("mark (-want +got):\n%s", diff)
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

// TestRestartNeverMovesTheVirtualClockBack: a virtual-clock serve moved to
// 18:25 by tick --now, stopped and started again with the same --start
// 17:00, let processing time go back 85 minutes (windows closed at 18:25
// would take orders again). It resumes from the time the folder kept; a
// later --start still moves it forward.
func TestRestartNeverMovesTheVirtualClockBack(t *testing.T) {
	dir := t.TempDir()
	ticked := t0.Add(85 * time.Minute)
	restart := func(t *testing.T, from time.Time) time.Time {
		t.Helper()
		s, err := Start(t.Context(), options(dir, from))
		if err != nil {
			t.Fatal(err)
		}
		defer s.Shutdown("test done")
		now := s.Clock.Now()
		s.Clock.Set(ticked) // what tick --now does; a no-op once past it
		return now
	}
	restart(t, t0)
	steps := []struct {
		name  string
		start time.Time
		want  time.Time
	}{
		{name: "same --start resumes", start: t0, want: ticked},
		{name: "a later --start moves it on", start: ticked.Add(time.Hour), want: ticked.Add(time.Hour)},
		{name: "never back to an earlier one", start: ticked, want: ticked.Add(time.Hour)},
	}
	for _, st := range steps {
		if got := restart(t, st.start); !got.Equal(st.want) {
			t.Errorf("%s: restarted with --start %s, the clock reads %s; want %s", st.name, st.start.Format(time.TimeOnly), got.Format(time.TimeOnly), st.want.Format(time.TimeOnly))
		}
	}
}
