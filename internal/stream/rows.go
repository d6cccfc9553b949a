package stream

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/alpinashop/alpipe/internal/order"
	"github.com/alpinashop/alpipe/internal/warehouse"
	"github.com/alpinashop/alpipe/internal/window"
)

// MaxRawBytes bounds the message body kept in pedidos_descartados.raw. A
// Pub/Sub message may hold 10 MB, an outbox document 1 MiB: the row keeps
// the first MaxRawBytes and says how long the body was.
const MaxRawBytes = 64 << 10

// Reasons recorded in pedidos_descartados.reason besides "invalid: ...".
const ReasonTooLate = "too_late"

// entry is an outbox document: one row on its way to the warehouse.
type entry struct {
	Table   string       `json:"table"`
	RowID   string       `json:"row_id"`
	Pane    *window.Pane `json:"pane,omitempty"`
	Discard *discard     `json:"discard,omitempty"`
}

// discard is a row of pedidos_descartados; empty strings and zero times are
// NULL.
type discard struct {
	PedidoID    string    `json:"pedido_id,omitempty"`
	Aggregation string    `json:"aggregation,omitempty"`
	Reason      string    `json:"reason"`
	EventTime   time.Time `json:"event_time,omitzero"`
	WindowStart time.Time `json:"window_start,omitzero"`
	Watermark   time.Time `json:"watermark,omitzero"`
	ReceivedAt  time.Time `json:"received_at"`
	MessageID   string    `json:"message_id,omitempty"`
	Raw         string    `json:"raw,omitempty"`
}

// Row identities are stable, so that a redelivery or a second flush appends
// nothing new. A too-late row names the window only with sliding windows,
// where one order may be dropped from several; fixed windows keep the form
// rows had before.
func tooLateRowID(s window.Spec, pedidoID string, w window.Window) string {
	id := "too_late|" + s.Name + "|" + pedidoID
	if s.Sliding() {
		id += "|" + w.Start.UTC().Format(time.RFC3339)
	}
	return id
}

func skuMissingRowID(agg, pedidoID string, line int) string {
	return ReasonSKUMissing + "|" + agg + "|" + pedidoID + "|" + strconv.Itoa(line)
}
func invalidRowID(messageID string) string { return "invalid|" + messageID }

func overflowRowID(agg, pedidoID string) string { return "overflow|" + agg + "|" + pedidoID }
func undecodableRowID(sum string) string        { return "undecodable|" + sum }

// rowMapper turns outbox entries into warehouse rows by the tables' schemas,
// so a column added to a schema file fails New instead of a flush.
type rowMapper struct {
	panes    map[string]paneTable // by aggregation
	discards warehouse.Table
	discCols []func(discard) warehouse.Value
}

type paneTable struct {
	table warehouse.Table
	cols  []func(window.Pane) warehouse.Value
}

// PanesTable names the panes table of an aggregation.
func PanesTable(agg string) string { return agg + "_paneles" }

func newRowMapper(specs []window.Spec) (*rowMapper, error) {
	dt, err := warehouse.Lookup(warehouse.PedidosDescartados)
	if err != nil {
		return nil, err
	}
	m := &rowMapper{discards: dt, panes: map[string]paneTable{}}
	for _, s := range specs {
		pt, err := PanesTableOf(s)
		if err != nil {
			return nil, fmt.Errorf("aggregation %q: %w", s.Name, err)
		}
		cols, err := paneColumns(pt, s.KeyField)
		if err != nil {
			return nil, fmt.Errorf("aggregation %q: %w", s.Name, err)
		}
		m.panes[s.Name] = paneTable{table: pt, cols: cols}
	}
	if m.discCols, err = columns(dt, discardValues); err != nil {
		return nil, err
	}
	return m, nil
}

// PanesTableOf is the panes table of aggregation s: the one the warehouse
// declares, or, for one it does not (tests, a declaration being added), the
// one it builds from the template.
func PanesTableOf(s window.Spec) (warehouse.Table, error) {
	if t, err := warehouse.Lookup(PanesTable(s.Name)); err == nil {
		return t, nil
	}
	return warehouse.PanesTable(s)
}

// paneValues are the pane columns by name but the key's.
var paneValues = map[string]func(window.Pane) warehouse.Value{
	"aggregation":  func(p window.Pane) warehouse.Value { return warehouse.StringValue(p.Aggregation) },
	"window_start": func(p window.Pane) warehouse.Value { return warehouse.TimeValue(p.WindowStart) },
	"window_end":   func(p window.Pane) warehouse.Value { return warehouse.TimeValue(p.WindowEnd) },
	"importe":      func(p window.Pane) warehouse.Value { return warehouse.DecValue(p.Measures.Importe) },
	"pedidos":      func(p window.Pane) warehouse.Value { return warehouse.IntValue(p.Measures.Pedidos) },
	"unidades":     func(p window.Pane) warehouse.Value { return warehouse.IntValue(p.Measures.Unidades) },
	"pane_index":   func(p window.Pane) warehouse.Value { return warehouse.IntValue(p.Index) },
	"timing":       func(p window.Pane) warehouse.Value { return warehouse.StringValue(string(p.Timing)) },
	"accumulation": func(p window.Pane) warehouse.Value { return warehouse.StringValue(string(p.Accumulation)) },
	"watermark":    func(p window.Pane) warehouse.Value { return warehouse.TimeValue(p.Watermark) },
	"emitted_at":   func(p window.Pane) warehouse.Value { return warehouse.TimeValue(p.EmittedAt) },
	"merged_into":  func(p window.Pane) warehouse.Value { return nullTime(p.MergedInto) },
}

var discardValues = map[string]func(discard) warehouse.Value{
	"pedido_id":    func(d discard) warehouse.Value { return nullString(d.PedidoID) },
	"aggregation":  func(d discard) warehouse.Value { return nullString(d.Aggregation) },
	"reason":       func(d discard) warehouse.Value { return warehouse.StringValue(d.Reason) },
	"event_time":   func(d discard) warehouse.Value { return nullTime(d.EventTime) },
	"window_start": func(d discard) warehouse.Value { return nullTime(d.WindowStart) },
	"watermark":    func(d discard) warehouse.Value { return nullTime(d.Watermark) },
	"received_at":  func(d discard) warehouse.Value { return warehouse.TimeValue(d.ReceivedAt) },
	"message_id":   func(d discard) warehouse.Value { return nullString(d.MessageID) },
	"raw":          func(d discard) warehouse.Value { return nullString(d.Raw) },
}

func nullString(s string) warehouse.Value {
	if s == "" {
		return warehouse.NullValue()
	}
	return warehouse.StringValue(s)
}

func nullTime(t time.Time) warehouse.Value {
	if t.IsZero() {
		return warehouse.NullValue()
	}
	return warehouse.TimeValue(t)
}

// columns maps t's schema to values; a column without one is NULL, or an
// error when required.
func columns[T any](t warehouse.Table, values map[string]func(T) warehouse.Value) ([]func(T) warehouse.Value, error) {
	cols := make([]func(T) warehouse.Value, len(t.Schema))
	for i, f := range t.Schema {
		c, ok := values[f.Name]
		if !ok && f.Required() {
			return nil, fmt.Errorf("table %s: required column %s has no value", t.Name, f.Name)
		}
		if !ok {
			c = func(T) warehouse.Value { return warehouse.NullValue() }
		}
		cols[i] = c
	}
	return cols, nil
}

func paneColumns(t warehouse.Table, keyField string) ([]func(window.Pane) warehouse.Value, error) {
	if t.Column(keyField) < 0 {
		return nil, fmt.Errorf("key field %q has no column in table %s", keyField, t.Name)
	}
	values := maps.Clone(paneValues)
	values[keyField] = func(p window.Pane) warehouse.Value { return warehouse.StringValue(p.Key) }
	return columns(t, values)
}

func (m *rowMapper) row(e entry) (warehouse.Row, error) {
	switch {
	case e.Pane != nil:
		pt, ok := m.panes[e.Pane.Aggregation]
		if !ok {
			return warehouse.Row{}, fmt.Errorf("outbox row %s: pane of unknown aggregation %q", e.RowID, e.Pane.Aggregation)
		}
		if e.Table != pt.table.Name {
			return warehouse.Row{}, fmt.Errorf("outbox row %s: pane of %s for table %q, want %s", e.RowID, e.Pane.Aggregation, e.Table, pt.table.Name)
		}
		vals := make([]warehouse.Value, len(pt.cols))
		for i, c := range pt.cols {
			vals[i] = c(*e.Pane)
		}
		return warehouse.Row{ID: e.RowID, Values: vals}, nil
	case e.Discard != nil && e.Table == m.discards.Name:
		vals := make([]warehouse.Value, len(m.discCols))
		for i, c := range m.discCols {
			vals[i] = c(*e.Discard)
		}
		return warehouse.Row{ID: e.RowID, Values: vals}, nil
	}
	return warehouse.Row{}, fmt.Errorf("outbox row %s: nothing to write to table %q", e.RowID, e.Table)
}

func (m *rowMapper) paneEntry(p window.Pane) entry {
	return entry{Table: m.panes[p.Aggregation].table.Name, RowID: p.ID(), Pane: &p}
}

func (m *rowMapper) discardEntry(rowID string, d discard) entry {
	return entry{Table: m.discards.Name, RowID: rowID, Discard: &d}
}

// rawMessage renders what was received for the raw column: the body (as
// text when it is UTF-8, else base64) and the attributes, as JSON; line,
// when set, is the index in lineas of the line the row is about.
func rawMessage(data []byte, attrs map[string]string, line *int) string {
	var r struct {
		Line       *int              `json:"line,omitempty"`
		Data       *string           `json:"data,omitempty"`
		DataBase64 *string           `json:"data_base64,omitempty"`
		Bytes      *int              `json:"data_bytes,omitempty"` // the body's length, when cut
		Attributes map[string]string `json:"attributes,omitempty"`
	}
	body := data
	if len(body) > MaxRawBytes {
		n := len(body)
		r.Bytes = &n
		body = body[:MaxRawBytes]
		for len(body) > MaxRawBytes-utf8.UTFMax && !utf8.Valid(body) {
			body = body[:len(body)-1] // do not split a character of a text body
		}
	}
	if utf8.Valid(body) {
		s := string(body)
		r.Data = &s
	} else {
		s := base64.StdEncoding.EncodeToString(body)
		r.DataBase64 = &s
	}
	r.Line = line
	r.Attributes = attrs
	if len(attrs) > 64 || attrBytes(attrs) > MaxRawBytes {
		r.Attributes = map[string]string{"_dropped": fmt.Sprintf("%d attributes", len(attrs))}
	}
	b, _ := json.Marshal(r) // strings and a string map always encode
	return string(b)
}

func attrBytes(attrs map[string]string) int {
	n := 0
	for k, v := range attrs {
		n += len(k) + len(v)
	}
	return n
}

// peekPedidoID finds a pedido_id in a body that is not a valid order.
func peekPedidoID(data []byte) string {
	var v struct {
		PedidoID any `json:"pedido_id"`
	}
	if json.Unmarshal(data, &v) != nil {
		return ""
	}
	s, _ := v.PedidoID.(string)
	if len(s) > 1024 {
		s = s[:1024]
	}
	if !utf8.ValidString(s) {
		return ""
	}
	return s
}

// peekEventTime parses the momento_evento attribute of a message that is not
// a valid order; zero (NULL) when it is not a valid one (raw still has it).
func peekEventTime(attrs map[string]string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(attrs[order.EventTimeAttribute]))
	if err != nil || t.Before(order.MinEventTime) || !t.Before(order.MaxEventTime) {
		return time.Time{}
	}
	return t.UTC()
}
