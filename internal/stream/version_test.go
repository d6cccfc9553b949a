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
	const path = "aggregations/a/state/20260314T170000Z_0"
	tests := []struct {
		name       string
		data       string
		into       func() any
		wantErr    string // "" when it decodes
		unreadable bool
	}{
		// A document without the field was written by no binary this one
		// knows: it is refused, as any layout but this one.
		{name: "control without a layout field", data: `{"gen":7,"aggs":{}}`, into: func() any { return &controlDoc{} },
			wantErr: path + ": state layout 0 found, this binary reads layout 3", unreadable: true},
		{name: "fold of layout 2", data: `{"layout":2,"folded":6}`, into: func() any { return &foldDoc{} },
			wantErr: path + ": state layout 2 found, this binary reads layout 3", unreadable: true},
		// Layout 3's documents: a newer binary's are refused by name, so
		// that a rollback fails its orders and ticks instead of mis-reading.
		{name: "control of layout 3", data: `{"layout":3,"gen":7,"aggs":{}}`, into: func() any { return &controlDoc{} }},
		{name: "control of layout 4", data: `{"layout":4,"gen":7}`, into: func() any { return &controlDoc{} },
			wantErr: path + ": state layout 4 found, this binary reads layout 3", unreadable: true},
		{name: "fold of layout 3", data: `{"layout":3,"folded":6,"windows":{}}`, into: func() any { return &foldDoc{} }},
		{name: "fold of layout 4", data: `{"layout":4,"folded":6}`, into: func() any { return &foldDoc{} },
			wantErr: path + ": state layout 4 found, this binary reads layout 3", unreadable: true},
		{name: "window part of layout 3", data: `{"layout":3,"keys":{}}`, into: func() any { return &partDoc{} }},
		{name: "window part of layout 4", data: `{"layout":4,"keys":{}}`, into: func() any { return &partDoc{} },
			wantErr: path + ": state layout 4 found, this binary reads layout 3", unreadable: true},
		{name: "window part that does not decode", data: `{"layout":3,"keys":[]}`, into: func() any { return &partDoc{} },
			wantErr: "decode " + path + ": json: cannot unmarshal array into Go struct field partDoc.keys of type map[string]stream.keyState", unreadable: true},
		{name: "session part of layout 3", data: `{"layout":3,"gen":4,"keys":{}}`, into: func() any { return &sessionsPart{} }},
		{name: "session part of layout 4", data: `{"layout":4,"gen":4,"keys":{}}`, into: func() any { return &sessionsPart{} },
			wantErr: path + ": state layout 4 found, this binary reads layout 3", unreadable: true},
		{name: "parked elements of layout 3", data: `{"layout":3,"elements":[]}`, into: func() any { return &parkedDoc{} }},
		{name: "parked elements of layout 4", data: `{"layout":4,"elements":[]}`, into: func() any { return &parkedDoc{} },
			wantErr: path + ": state layout 4 found, this binary reads layout 3", unreadable: true},
		{name: "layout that is not a number", data: `{"layout":"3"}`, into: func() any { return &foldDoc{} },
			wantErr: "decode " + path + ": json: cannot unmarshal string into Go struct field foldDoc.layout of type int", unreadable: true},
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
		{name: "control", v: controlDoc{Gen: 3}, want: float64(StateLayout)},
		{name: "fold", v: foldDoc{Folded: 2}, want: float64(StateLayout)},
		{name: "window part", v: partDoc{Start: wm}, want: float64(StateLayout)},
		{name: "parked elements", v: parkedDoc{}, want: float64(StateLayout)},
		{name: "a part of sessions", v: sessionsPart{Gen: 1}, want: float64(StateLayout)},
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
}

func TestDocWindow(t *testing.T) {
	s := window.Defaults()
	start := time.Date(2026, 3, 14, 17, 0, 0, 0, time.UTC)
	w := window.Window{Start: start, End: start.Add(s.WindowSize)}
	tests := []struct {
		name   string
		path   string
		want   window.Window
		wantOK bool
	}{
		{name: "window part", path: pathsOf("a").statePart(start, 0), want: w, wantOK: true},
		{name: "parked elements", path: pathsOf("a").parkedOf(start, 4), want: w, wantOK: true},
		{name: "no part number", path: "aggregations/a/state/20260314T170000Z", wantOK: false},
		{name: "part that is not a number", path: "aggregations/a/state/20260314T170000Z_x", wantOK: false},
		{name: "not a window start", path: "aggregations/a/state/garbage_0", wantOK: false},
		{name: "not window state", path: "aggregations/a/outbox/20260314T170000Z_0", wantOK: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := docWindow(s, tt.path)
			if ok != tt.wantOK {
				t.Fatalf("docWindow(%q) ok = %t, want %t", tt.path, ok, tt.wantOK)
			}
			if diff := cmp.Diff(tt.want, got); ok && diff != "" {
				t.Errorf("docWindow(%q) (-want +got):\n%s", tt.path, diff)
			}
		})
	}
}
