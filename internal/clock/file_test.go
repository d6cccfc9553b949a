package clock

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "now")
	if _, err := NewFile(path); err == nil {
		t.Fatal("NewFile on a missing file succeeded; want an error at start")
	}
	t0 := time.Date(2026, 3, 14, 17, 0, 0, 0, time.UTC)
	if err := Set(path, t0); err != nil {
		t.Fatal(err)
	}
	c, err := NewFile(path)
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name  string
		write string
		want  time.Time
	}{
		{name: "moves forward", write: "2026-03-14T18:25:00Z", want: t0.Add(85 * time.Minute)},
		{name: "never backwards", write: "2026-03-14T18:00:00Z", want: t0.Add(85 * time.Minute)},
		{name: "garbage keeps the last time", write: "18:30", want: t0.Add(85 * time.Minute)},
		{name: "other zones are read as instants", write: "2026-03-14T20:30:00+01:00", want: t0.Add(150 * time.Minute)},
	}
	for _, s := range steps {
		if err := os.WriteFile(path, []byte(s.write), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := c.Now(); !got.Equal(s.want) {
			t.Errorf("%s: Now() = %s, want %s", s.name, got, s.want)
		}
	}
}
