package clock

import (
	"errors"
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
