package clock

import (
	"testing"
	"time"
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
