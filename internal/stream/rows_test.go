package stream

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/docstore/boltstore"
	"github.com/alpinashop/alpipe/internal/logging"
	"github.com/alpinashop/alpipe/internal/numeric"
	"github.com/alpinashop/alpipe/internal/warehouse"
	"github.com/alpinashop/alpipe/internal/window"
	"github.com/alpinashop/alpipe/internal/window/windowtest"
)

func TestNewFailsFast(t *testing.T) {
	store, err := boltstore.Open(t.TempDir() + "/s.db")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	named := func(name string, change func(*window.Spec)) window.Spec {
		s := window.Defaults()
		s.Name = name
		if change != nil {
			change(&s)
		}
		return s
	}
	sessionsBySKU := windowtest.SessionSpec()
	sessionsBySKU.KeyField = KeySKU
	def := window.Defaults()
	tests := []struct {
		name  string
		specs []window.Spec
		want  string // substring of the error; "" for success
	}{
		{"defaults", []window.Spec{def}, ""},
		{"two aggregations", []window.Spec{def, named("ventas_15min_pais", func(s *window.Spec) { s.WindowSize = 15 * time.Minute })}, ""},
		{"none", nil, "no aggregation configured"},
		{"invalid spec", []window.Spec{named("x", func(s *window.Spec) { s.IdleTimeout = 0 })}, "idle timeout 0s must be positive"},
		{"same name twice", []window.Spec{def, def}, "configured twice"},
		{"key field not in orders", []window.Spec{named("x", func(s *window.Spec) { s.KeyField = "color" })},
			`key field "color" is neither a field of an order nor "sku"`},
		{"key sku, sliding", []window.Spec{def, named("ventas_sku_hora_movil", func(s *window.Spec) { s.KeyField, s.Period = "sku", 15*time.Minute })},
			""},
		{"key cliente_id", []window.Spec{named("x", func(s *window.Spec) { s.KeyField = "cliente_id" })}, ""},
		// The lines of an order are not a key a session can follow.
		{"sessions keyed by sku", []window.Spec{def, sessionsBySKU},
			`aggregation "sesiones_cliente": session windows are keyed by an order field, not "sku"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(store, nopSink{}, tt.specs, nil, logging.Discard())
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("New: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("New: %v, want an error containing %q", err, tt.want)
			}
		})
	}
	for _, tt := range []struct {
		opt  Option
		want string
	}{
		{WithBatching(-time.Millisecond, 10), "batch wait -1ms must be between 0 and 1s"},
		{WithBatching(2*time.Second, 10), "batch wait 2s must be between 0 and 1s"},
		{WithBatching(time.Millisecond, 0), fmt.Sprintf(
			"batch size %d must be between 1 and %d", 0, MaxBatchOrders)},
		{WithBatching(time.Millisecond, MaxBatchOrders+1), fmt.Sprintf(
			"batch size %d must be between 1 and %d", MaxBatchOrders+1, MaxBatchOrders)},
		{WithTickLease(0), "tick lease 0s must be positive"},
		{WithMaxClockSkew(0), "max clock skew 0s must be positive"},
		{WithSessionPartBytes(1 << 9), "session part bound 512 bytes must be between 1 KiB"},
	} {
		_, err := New(store, nopSink{}, []window.Spec{def}, nil, logging.Discard(), tt.opt)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("New with a bad option: %v, want an error containing %q", err, tt.want)
		}
	}
	if _, err := New(nil, nil, []window.Spec{window.Defaults()}, nil, nil); err == nil ||
		!strings.Contains(err.Error(), "no state store") || !strings.Contains(err.Error(), "no sink") {
		t.Errorf("New(nil, nil): %v, want both reported", err)
	}
}

func TestRows(t *testing.T) {
	m, err := newRowMapper([]window.Spec{window.Defaults()})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 3, 14, 17, 0, 0, 0, time.UTC)
	pane := window.Pane{Aggregation: "ventas_hora_pais", Key: "ES", WindowStart: start, WindowEnd: start.Add(time.Hour),
		Index: 2, Timing: window.TimingLate, Accumulation: window.Accumulating,
		Measures:  window.Measures{Importe: numeric.FromNanos(279_800_000_000), Pedidos: 2, Unidades: 3},
		Watermark: start.Add(90 * time.Minute), EmittedAt: start.Add(100 * time.Minute)}
	recv := start.Add(4 * time.Hour)
	tests := []struct {
		name  string
		e     entry
		table string
		want  map[string]warehouse.Value
	}{
		{
			name: "pane", e: m.paneEntry(pane), table: warehouse.VentasHoraPaisPaneles,
			want: map[string]warehouse.Value{
				"aggregation": warehouse.StringValue("ventas_hora_pais"), "window_start": warehouse.TimeValue(start),
				"window_end": warehouse.TimeValue(start.Add(time.Hour)), "pais": warehouse.StringValue("ES"),
				"importe": warehouse.DecValue(numeric.FromNanos(279_800_000_000)), "pedidos": warehouse.IntValue(2),
				"unidades": warehouse.IntValue(3), "pane_index": warehouse.IntValue(2), "timing": warehouse.StringValue("LATE"),
				"accumulation": warehouse.StringValue("ACCUMULATING"), "watermark": warehouse.TimeValue(start.Add(90 * time.Minute)),
				"emitted_at": warehouse.TimeValue(start.Add(100 * time.Minute)),
			},
		},
		{
			name: "too late", e: m.discardEntry(tooLateRowID(window.Defaults(), "P-3", window.Window{Start: start}), discard{
				PedidoID: "P-3", Aggregation: "ventas_hora_pais",
				Reason: ReasonTooLate, EventTime: start.Add(55 * time.Minute), WindowStart: start, Watermark: start.Add(3 * time.Hour),
				ReceivedAt: recv, MessageID: "m9", Raw: "{}"}),
			table: warehouse.PedidosDescartados,
			want: map[string]warehouse.Value{
				"pedido_id": warehouse.StringValue("P-3"), "aggregation": warehouse.StringValue("ventas_hora_pais"),
				"reason": warehouse.StringValue("too_late"), "event_time": warehouse.TimeValue(start.Add(55 * time.Minute)),
				"window_start": warehouse.TimeValue(start), "watermark": warehouse.TimeValue(start.Add(3 * time.Hour)),
				"received_at": warehouse.TimeValue(recv), "message_id": warehouse.StringValue("m9"), "raw": warehouse.StringValue("{}"),
			},
		},
		{
			name: "undecodable: NULL where unknown", e: m.discardEntry("undecodable|ab", discard{Reason: "invalid: not a push body", ReceivedAt: recv, Raw: "x"}),
			table: warehouse.PedidosDescartados,
			want: map[string]warehouse.Value{
				"pedido_id": warehouse.NullValue(), "aggregation": warehouse.NullValue(),
				"reason": warehouse.StringValue("invalid: not a push body"), "event_time": warehouse.NullValue(),
				"window_start": warehouse.NullValue(), "watermark": warehouse.NullValue(),
				"received_at": warehouse.TimeValue(recv), "message_id": warehouse.NullValue(), "raw": warehouse.StringValue("x"),
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Through JSON, as the outbox stores it.
			b, err := json.Marshal(tt.e)
			if err != nil {
				t.Fatal(err)
			}
			var e entry
			if err := json.Unmarshal(b, &e); err != nil {
				t.Fatal(err)
			}
			row, err := m.row(e)
			if err != nil {
				t.Fatal(err)
			}
			tbl, err := warehouse.Lookup(tt.table)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]warehouse.Value{}
			for i, f := range tbl.Schema {
				got[f.Name] = row.Values[i]
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("row (-want +got):\n%s", diff)
			}
			if row.ID != tt.e.RowID {
				t.Errorf("row ID %q, want %q", row.ID, tt.e.RowID)
			}
		})
	}
}

func TestRawMessage(t *testing.T) {
	attrs := map[string]string{"momento_evento": "2026-03-14T18:42:00+01:00"}
	big := strings.Repeat("ñ", MaxRawBytes) // 2 bytes each: twice the limit
	tests := []struct {
		name string
		data []byte
		want map[string]any
	}{
		{"text", []byte(`{"pedido_id":"P-1"}`), map[string]any{"data": `{"pedido_id":"P-1"}`, "attributes": map[string]any{"momento_evento": "2026-03-14T18:42:00+01:00"}}},
		{"binary", []byte{0xff, 0x00, 0x01}, map[string]any{"data_base64": "/wAB", "attributes": map[string]any{"momento_evento": "2026-03-14T18:42:00+01:00"}}},
		{"cut at the limit, on a character boundary", []byte(big), map[string]any{"data": big[:MaxRawBytes], "data_bytes": float64(2 * MaxRawBytes),
			"attributes": map[string]any{"momento_evento": "2026-03-14T18:42:00+01:00"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got map[string]any
			if err := json.Unmarshal([]byte(rawMessage(tt.data, attrs, nil)), &got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("raw (-want +got):\n%s", diff)
			}
		})
	}
}

type nopSink struct{}

func (nopSink) Append(context.Context, string, []warehouse.Row) error { return nil }
