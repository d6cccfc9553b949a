//go:build unix

package bqemulator

import (
	"os"
	"testing"
)

// TestStopLeavesNoFiles: the emulator spills SQLite files into its TMPDIR
// and, killed, cannot remove them; Stop must.
func TestStopLeavesNoFiles(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped under -short: starts the BigQuery emulator")
	}
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin, err := Find(t.Context(), root, false)
	if err != nil {
		t.Skip(err)
	}
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	e, err := Start(t.Context(), bin, Options{Project: "alpipe-test"})
	if err != nil {
		t.Fatal(err)
	}
	if entries, err := os.ReadDir(e.tmp); err != nil || len(entries) == 0 {
		t.Errorf("the running emulator's TMPDIR %s holds %d files (%v), want its spill files", e.tmp, len(entries), err)
	}
	e.Stop()
	if entries, _ := os.ReadDir(tmp); len(entries) != 0 {
		t.Errorf("after Stop %s holds %s, want nothing", tmp, entries[0].Name())
	}
}
