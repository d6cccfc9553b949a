package stream

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/docstore"
	"github.com/alpinashop/alpipe/internal/window"
)

func TestDecodeLayout(t *testing.T) {
	const path = "aggregations/a/windows/20260314T170000Z_ES"
	tests := []struct {
		name       string
		data       string
		into       func() any
		wantErr    string // "" when it decodes
		unreadable bool
	}{
		{name: "cell without a layout field is layout 1", data: `{"key":"ES","shards":1}`, into: func() any { return &cellDoc{} }},
		{name: "cell of layout 1", data: `{"layout":1,"key":"ES","shards":1}`, into: func() any { return &cellDoc{} }},
		{name: "cell of layout 2", data: `{"layout":2,"key":"ES","shards":1}`, into: func() any { return &cellDoc{} }},
		{name: "cell of layout 3", data: `{"layout":3,"key":"ES"}`, into: func() any { return &cellDoc{} }},
		{name: "cell of layout 4", data: `{"layout":4,"key":"ES"}`, into: func() any { return &cellDoc{} },
			wantErr: path + ": state layout 4 found, this binary reads layouts 1 to 3", unreadable: true},
		{name: "delta of layout 7", data: `{"layout":7}`, into: func() any { return &deltaDoc{} },
			wantErr: path + ": state layout 7 found, this binary reads layouts 1 to 3", unreadable: true},
		{name: "agenda of layout -1", data: `{"layout":-1}`, into: func() any { return &agendaDoc{} },
			wantErr: path + ": state layout -1 found, this binary reads layouts 1 to 3", unreadable: true},
		{name: "agenda without a layout field", data: `{"cells":{}}`, into: func() any { return &agendaDoc{} }},
		{name: "watermark without a layout field", data: `{"watermark":"2026-03-14T17:00:00Z"}`, into: func() any { return &window.WatermarkState{} }},
		{name: "watermark of layout 2", data: `{"layout":2,"watermark":"2026-03-14T17:00:00Z"}`, into: func() any { return &window.WatermarkState{} }},
		// Layout 3 re-stamps the previous watermark document, which it
		// no longer writes otherwise: that is the fence against layout 2.
		{name: "watermark of layout 3", data: `{"layout":3,"watermark":"2026-03-14T17:00:00Z"}`, into: func() any { return &window.WatermarkState{} }},
		{name: "watermark of layout 4", data: `{"layout":4,"watermark":"2026-03-14T17:00:00Z"}`, into: func() any { return &window.WatermarkState{} },
			wantErr: path + ": state layout 4 found, this binary reads layouts 1 to 3", unreadable: true},
		// Layout 3's documents: a newer binary's are refused by name, so
		// that a rollback fails its orders and ticks instead of mis-reading.
		{name: "control of layout 3", data: `{"layout":3,"gen":7,"aggs":{}}`, into: func() any { return &controlDoc{} }},
		{name: "control of layout 4", data: `{"layout":4,"gen":7}`, into: func() any { return &controlDoc{} },
			wantErr: path + ": state layout 4 found, this binary reads layouts 1 to 3", unreadable: true},
		{name: "fold of layout 3", data: `{"layout":3,"folded":6,"windows":{}}`, into: func() any { return &foldDoc{} }},
		{name: "fold of layout 4", data: `{"layout":4,"folded":6}`, into: func() any { return &foldDoc{} },
			wantErr: path + ": state layout 4 found, this binary reads layouts 1 to 3", unreadable: true},
		{name: "window part of layout 3", data: `{"layout":3,"keys":{}}`, into: func() any { return &partDoc{} }},
		{name: "window part of layout 4", data: `{"layout":4,"keys":{}}`, into: func() any { return &partDoc{} },
			wantErr: path + ": state layout 4 found, this binary reads layouts 1 to 3", unreadable: true},
		{name: "window part that does not decode", data: `{"layout":3,"keys":[]}`, into: func() any { return &partDoc{} },
			wantErr: "decode " + path + ": json: cannot unmarshal array into Go struct field partDoc.keys of type map[string]stream.keyState", unreadable: true},
		{name: "parked elements of layout 3", data: `{"layout":3,"elements":[]}`, into: func() any { return &parkedDoc{} }},
		{name: "parked elements of layout 4", data: `{"layout":4,"elements":[]}`, into: func() any { return &parkedDoc{} },
			wantErr: path + ": state layout 4 found, this binary reads layouts 1 to 3", unreadable: true},
		{name: "cell that does not decode", data: `{"state":"garbage"}`, into: func() any { return &cellDoc{} },
			wantErr: "decode " + path + ": json: cannot unmarshal string into Go struct field cellDoc.state of type window.PaneState", unreadable: true},
		{name: "layout that is not a number", data: `{"layout":"2"}`, into: func() any { return &deltaDoc{} },
			wantErr: "decode " + path + ": json: cannot unmarshal string into Go struct field deltaDoc.layout of type int", unreadable: true},
		{name: "lease carries no layout", data: `{"layout":9,"holder":"h"}`, into: func() any { return &leaseDoc{} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := decodeDoc(docstore.Doc{Path: path, Data: []byte(tt.data), Exists: true}, tt.into())
			got := ""
			if err != nil {
				got = err.Error()
			}
			if diff := cmp.Diff(tt.wantErr, got); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if errors.Is(err, ErrUnreadableState) != tt.unreadable {
				t.Errorf("errors.Is(%v, ErrUnreadableState) = %t, want %t", err, !tt.unreadable, tt.unreadable)
			}
		})
	}
}

func TestEncodeStampsLayout(t *testing.T) {
	wm := time.Date(2026, 3, 14, 17, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		v    any
		want any // the "layout" field as decoded; nil when absent
	}{
		{name: "cell", v: cellDoc{Key: "ES"}, want: float64(StateLayout)},
		{name: "delta", v: deltaDoc{Key: "ES"}, want: float64(StateLayout)},
		{name: "agenda", v: agendaDoc{}, want: float64(StateLayout)},
		{name: "watermark", v: window.WatermarkState{Watermark: wm}, want: float64(StateLayout)},
		{name: "control", v: controlDoc{Gen: 3}, want: float64(StateLayout)},
		{name: "fold", v: foldDoc{Folded: 2}, want: float64(StateLayout)},
		{name: "window part", v: partDoc{Start: wm}, want: float64(StateLayout)},
		{name: "parked elements", v: parkedDoc{}, want: float64(StateLayout)},
		{name: "dedup record is no window state", v: dedupDoc{MessageID: "m", Gen: 3}, want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := encodeDoc("a/b", tt.v, time.Time{})
			if err != nil {
				t.Fatal(err)
			}
			var m map[string]any
			if err := json.Unmarshal(d.Data, &m); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, m["layout"]); diff != "" {
				t.Errorf("layout in %s (-want +got):\n%s", d.Data, diff)
			}
		})
	}
	// The watermark keeps its fields at the top level, where documents
	// written before the layout field have them.
	d, err := encodeDoc("a/b", window.WatermarkState{Watermark: wm}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	var back window.WatermarkState
	if err := json.Unmarshal(d.Data, &back); err != nil || !back.Watermark.Equal(wm) {
		t.Errorf("an older binary reads %s as %+v, %v; want watermark %s", d.Data, back, err, wm)
	}
}

func TestDocCell(t *testing.T) {
	s := window.Defaults()
	start := time.Date(2026, 3, 14, 17, 0, 0, 0, time.UTC)
	w := window.Window{Start: start, End: start.Add(s.WindowSize)}
	tests := []struct {
		name   string
		path   string
		want   window.WindowKey
		wantOK bool
	}{
		{name: "plain key", path: pathsOf("a").delta(window.WindowKey{Window: w, Key: "ES"}, 3), want: window.WindowKey{Window: w, Key: "ES"}, wantOK: true},
		{name: "key with an underscore and a slash", path: pathsOf("a").delta(window.WindowKey{Window: w, Key: "a_b/c"}, 12), want: window.WindowKey{Window: w, Key: "a_b/c"}, wantOK: true},
		{name: "empty key", path: pathsOf("a").delta(window.WindowKey{Window: w, Key: ""}, 0), want: window.WindowKey{Window: w, Key: ""}, wantOK: true},
		{name: "no delta number", path: "aggregations/a/deltas/20260314T170000Z_ES", wantOK: false},
		{name: "not a window start", path: "aggregations/a/deltas/garbage_ES_1", wantOK: false},
		{name: "bad escape", path: "aggregations/a/deltas/20260314T170000Z_%zz_1", wantOK: false},
		{name: "cell", path: pathsOf("a").cell(window.WindowKey{Window: w, Key: "a_b"}), want: window.WindowKey{Window: w, Key: "a_b"}, wantOK: true},
		{name: "agenda document", path: pathsOf("a").agendaOf(w), want: window.WindowKey{Window: w}, wantOK: true},
		{name: "agenda document with a suffix", path: pathsOf("a").agendaOf(w) + "x", wantOK: false},
		{name: "dedup record", path: "aggregations/a/orders/20260314T170000Z_ES", wantOK: false},
		// Layout 3's window state names its window and part, not a key:
		// the fold reports it as a failing window itself (Key empty).
		{name: "window part", path: pathsOf("a").statePart(start, 0), wantOK: false},
		{name: "parked elements", path: pathsOf("a").parkedOf(start, 4), wantOK: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := docCell(s, tt.path)
			if ok != tt.wantOK {
				t.Fatalf("docCell(%q) ok = %t, want %t", tt.path, ok, tt.wantOK)
			}
			if diff := cmp.Diff(tt.want, got); ok && diff != "" {
				t.Errorf("docCell(%q) (-want +got):\n%s", tt.path, diff)
			}
		})
	}
}
