package clock

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestLocal(t *testing.T) {
	start := time.Date(2026, 3, 14, 17, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		set  []time.Time
		want time.Time
	}{
		{name: "virtual stands still", want: start},
		{name: "virtual moves by Set", set: []time.Time{start.Add(time.Hour)}, want: start.Add(time.Hour)},
		{name: "virtual never goes back", set: []time.Time{start.Add(time.Hour), start}, want: start.Add(time.Hour)},
		{name: "other zones read as UTC", set: []time.Time{start.Add(time.Minute).In(time.FixedZone("CET", 3600))}, want: start.Add(time.Minute)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := Virtual(start)
			for _, s := range tc.set {
				c.Set(s)
			}
			if got := c.Now(); !got.Equal(tc.want) || got.Location() != time.UTC {
				t.Errorf("Now() = %v, want %v in UTC", got, tc.want)
			}
		})
	}
	t.Run("wall follows the machine and ignores Set", func(t *testing.T) {
		c := Wall()
		c.Set(start)
		before := time.Now()
		got := c.Now()
		if c.Virtual() || got.Before(before.Add(-time.Second)) || got.Location() != time.UTC {
			t.Errorf("wall clock read %v (virtual %v), want about %v in UTC", got, c.Virtual(), before)
		}
	})
}

// TestLocalPersist: a Set is saved before the clock shows it, and a Set
// that cannot be saved leaves the clock where it was.
func TestLocalPersist(t *testing.T) {
	start := time.Date(2026, 3, 14, 17, 0, 0, 0, time.UTC)
	c := Virtual(start)
	var saved []time.Time
	fail := false
	c.Persist(func(t time.Time) error {
		if fail {
			return errors.New("disk full")
		}
		saved = append(saved, t)
		return nil
	})
	for _, s := range []time.Time{start.Add(time.Hour), start, start.Add(time.Hour)} {
		if err := c.Set(s); err != nil {
			t.Fatal(err)
		}
	}
	if diff := cmp.Diff([]time.Time{start.Add(time.Hour)}, saved); diff != "" {
		t.Errorf("saved (-want +got):\n%s", diff)
	}
	fail = true
	if err := c.Set(start.Add(2 * time.Hour)); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("Set with a failing save = %v, want its error", err)
	}
	if got := c.Now(); !got.Equal(start.Add(time.Hour)) {
		t.Errorf("after a failed save the clock reads %v, want %v", got, start.Add(time.Hour))
	}
}

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
