package stream

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/docstore"
	"github.com/alpinashop/alpipe/internal/window"
)

// TestOutboxFormats: a tick transaction's panes share one document, read
// back row by row; one-row documents read as an entry. A binary that
// predates the several-row document cannot render it, so it leaves it in
// place for this one.
func TestOutboxFormats(t *testing.T) {
	start := time.Date(2026, 3, 14, 17, 0, 0, 0, time.UTC)
	pane := func(key string) entry {
		p := window.Pane{Aggregation: "ventas_hora_pais", WindowStart: start, WindowEnd: start.Add(time.Hour), Key: key}
		return entry{Table: "ventas_hora_pais_paneles", RowID: p.ID(), Pane: &p}
	}
	one, two := pane("ES"), pane("PT")
	tests := []struct {
		name    string
		payload any
		want    []entry
	}{
		{name: "one row, as orders and earlier ticks write it", payload: one, want: []entry{one}},
		{name: "several rows of one tick transaction", payload: outboxDoc{Rows: []entry{one, two}}, want: []entry{one, two}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(tt.payload)
			if err != nil {
				t.Fatal(err)
			}
			got, err := decodeOutbox(docstore.Doc{Path: "aggregations/x/outbox/y", Exists: true, Data: b})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(entry{})); diff != "" {
				t.Errorf("rows (-want +got):\n%s", diff)
			}
		})
	}
	b, err := json.Marshal(outboxDoc{Rows: []entry{one, two}})
	if err != nil {
		t.Fatal(err)
	}
	var old entry // what the previous binary decodes the document into
	if err := json.Unmarshal(b, &old); err != nil {
		t.Fatal(err)
	}
	m := &rowMapper{}
	if _, err := m.row(old); err == nil {
		t.Errorf("the previous binary renders a several-row document as %+v; it must leave it in place", old)
	}
}
