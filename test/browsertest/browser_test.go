package browsertest

import (
	"path/filepath"
	"runtime"
	"testing"
)

// endT records how Find ends a test; Skip and Fatalf stop the goroutine,
// as testing's do.
type endT struct {
	testing.TB
	ended string
}

func (e *endT) Helper()               {}
func (e *endT) Skip(...any)           { e.ended = "skip"; runtime.Goexit() }
func (e *endT) Fatalf(string, ...any) { e.ended = "fail"; runtime.Goexit() }

// TestFindFailsUnderCI: without a browser the proofs skip on a laptop but
// fail in CI, which installs one; -short skips them everywhere.
func TestFindFailsUnderCI(t *testing.T) {
	t.Setenv("CHROMIUM", filepath.Join(t.TempDir(), "no-chromium"))
	want := map[string]string{"true": "fail", "": "skip"}
	if testing.Short() {
		want["true"] = "skip"
	}
	for ci, w := range want {
		t.Setenv("CI", ci)
		e := &endT{TB: t}
		done := make(chan struct{})
		go func() { defer close(done); Find(e) }()
		<-done
		if e.ended != w {
			t.Errorf("CI=%q: Find ended the test with %q, want %q", ci, e.ended, w)
		}
	}
}
