package stream

import (
	"reflect"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/numeric"
	"github.com/alpinashop/alpipe/internal/window"
)

// TestSessionListRoundTrip: every field of a session survives its part's
// encoding, and a field package window adds fails here until the encoding
// stores it.
func TestSessionListRoundTrip(t *testing.T) {
	for _, tt := range []struct {
		v    any
		want int
	}{{window.Session{}, 5}, {window.Retired{}, 3}, {window.PaneState{}, 3}, {window.Partial{}, 6}} {
		if got := reflect.TypeOf(tt.v).NumField(); got != tt.want {
			t.Errorf("%T has %d fields, the session encoding stores %d", tt.v, got, tt.want)
		}
	}
	dec := func(s string) numeric.Dec {
		d, err := numeric.Parse(s, false)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	at := time.Date(2026, 3, 14, 17, 0, 0, 123456789, time.UTC)
	m := window.Measures{Importe: dec("1234.56"), Pedidos: 2, Unidades: 5}
	tests := []struct {
		name string
		l    []window.Session
	}{
		{name: "every field set", l: []window.Session{{Start: at, End: at.Add(time.Hour),
			State:   window.PaneState{NextIndex: 3, Emitted: m, OnTime: window.OnTimeDone},
			Sum:     window.Partial{Measures: m, OnTime: true, Epoch: 3, PendingSince: at.Add(time.Minute), MaxEventTime: at.Add(2 * time.Minute), LastAccepted: at.Add(3 * time.Minute)},
			Retired: []window.Retired{{Start: at.Add(-time.Hour), End: at, State: window.PaneState{NextIndex: 1, Emitted: m, OnTime: window.OnTimePending}}},
		}}},
		{name: "zero times and measures", l: []window.Session{{Start: at, End: at.Add(time.Hour)}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := encodeDoc("aggregations/a/sessions/0", sessionsPart{Keys: map[string][]window.Session{"C-1": tt.l}}, time.Time{})
			if err != nil {
				t.Fatal(err)
			}
			var got sessionsPart
			d.Exists = true
			if err := decodeDoc(d, &got); err != nil {
				t.Fatal(err)
			}
			got.load()
			b := d.Data
			if diff := cmp.Diff(tt.l, got.Keys["C-1"], cmp.AllowUnexported(numeric.Dec{})); diff != "" {
				t.Errorf("round trip of %s (-want +got):\n%s", b, diff)
			}
		})
	}
}
