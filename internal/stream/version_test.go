package stream

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/docstore"
	"github.com/alpinashop/alpipe/internal/window"
)

func TestDecodeLayout(t *testing.T) {
	const path = "aggregations/a/state/20260314T170000Z_0"
	docs := map[string]func() any{
		"control": func() any { return &controlDoc{} }, "fold": func() any { return &foldDoc{} },
		"part": func() any { return &partDoc{} }, "sessions": func() any { return &sessionsPart{} },
		"parked": func() any { return &parkedDoc{} }, "lease": func() any { return &leaseDoc{} },
	}
	layout := func(n string) string { return path + ": state layout " + n + " found, this binary reads layout 3" }
	// wantErr "": it decodes; any error must be ErrUnreadableState. A
	// document without the field was written by no binary this one knows,
	// and a newer binary's are refused by name, so that a rollback fails its
	// orders and ticks instead of mis-reading.
	tests := []struct{ name, doc, data, wantErr string }{
		{"control without a layout field", "control", `{"gen":7,"aggs":{}}`, layout("0")},
		{"fold of layout 2", "fold", `{"layout":2,"folded":6}`, layout("2")},
		{"control of layout 3", "control", `{"layout":3,"gen":7,"aggs":{}}`, ""},
		{"control of layout 4", "control", `{"layout":4,"gen":7}`, layout("4")},
		{"fold of layout 3", "fold", `{"layout":3,"folded":6,"windows":{}}`, ""},
		{"fold of layout 4", "fold", `{"layout":4,"folded":6}`, layout("4")},
		{"window part of layout 3", "part", `{"layout":3,"keys":{}}`, ""},
		{"window part of layout 4", "part", `{"layout":4,"keys":{}}`, layout("4")},
		{"window part that does not decode", "part", `{"layout":3,"keys":[]}`, "decode " + path +
			": json: cannot unmarshal array into Go struct field partDoc.keys of type map[string]stream.keyState"},
		{"session part of layout 3", "sessions", `{"layout":3,"gen":4,"keys":{}}`, ""},
		{"session part of layout 4", "sessions", `{"layout":4,"gen":4,"keys":{}}`, layout("4")},
		{"parked elements of layout 3", "parked", `{"layout":3,"elements":[]}`, ""},
		{"parked elements of layout 4", "parked", `{"layout":4,"elements":[]}`, layout("4")},
		{"layout that is not a number", "fold", `{"layout":"3"}`,
			"decode " + path + ": json: cannot unmarshal string into Go struct field foldDoc.layout of type int"},
		{"lease carries no layout", "lease", `{"layout":9,"holder":"h"}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := decodeDoc(docstore.Doc{Path: path, Data: []byte(tt.data), Exists: true}, docs[tt.doc]())
			got := ""
			if err != nil {
				got = err.Error()
			}
			if diff := cmp.Diff(tt.wantErr, got); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if errors.Is(err, ErrUnreadableState) != (tt.wantErr != "") {
				t.Errorf("errors.Is(%v, ErrUnreadableState) = %t", err, errors.Is(err, ErrUnreadableState))
			}
		})
	}
}

// TestEncodeStampsLayout: every state document is written with
// StateLayout; a dedup record is no window state and carries no layout.
func TestEncodeStampsLayout(t *testing.T) {
	docs := []any{controlDoc{Gen: 3}, foldDoc{Folded: 2}, partDoc{}, parkedDoc{}, sessionsPart{Gen: 1}}
	want := fmt.Sprintf(`"layout":%d,`, StateLayout)
	for _, v := range docs {
		d, err := encodeDoc("a/b", v, time.Time{})
		if err != nil || !strings.Contains(string(d.Data), want) {
			t.Errorf("%T encoded as %s (%v), want %s", v, d.Data, err, want)
		}
	}
	d, err := encodeDoc("a/b", dedupDoc{MessageID: "m", Gen: 3}, time.Time{})
	if err != nil || strings.Contains(string(d.Data), "layout") {
		t.Errorf("dedup record encoded as %s (%v), want no layout", d.Data, err)
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
		{"window part", pathsOf("a").statePart(start, 0), w, true},
		{"parked elements", pathsOf("a").parkedOf(start, 4), w, true},
		{"no part number", "aggregations/a/state/20260314T170000Z", window.Window{}, false},
		{"part that is not a number", "aggregations/a/state/20260314T170000Z_x", window.Window{}, false},
		{"not a window start", "aggregations/a/state/garbage_0", window.Window{}, false},
		{"not window state", "aggregations/a/outbox/20260314T170000Z_0", window.Window{}, false},
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
