package warehouse

import (
	"context"
	"fmt"
	"strings"
)

// Listing is a named read listing a table or view whole, for the demo: its
// answer stays text and says each column's type.
type Listing struct {
	From    string // a table, or a declared aggregation's view
	Columns []string
	OrderBy []string // columns, ascending
}

const (
	ListLineasPedido     = "list_lineas_pedido"
	ListOpiniones        = "list_opiniones"
	ListVentasDiariasSKU = "list_ventas_diarias_sku"
	ListPanes            = "list_panes"
	ListView             = "list_view" // ventas_hora_pais; "list_view:<name>" for the other views (ViewListing)
	ListDiscards         = "list_discards"
)

func init() {
	for _, e := range []struct {
		name string
		l    Listing
	}{
		{ListLineasPedido, Listing{LineasPedido, []string{"pedido_id", "linea", "fecha", "sku", "cantidad", "precio_unitario", "importe", "pais", "source_line"}, []string{"pedido_id", "linea"}}},
		{ListOpiniones, Listing{Opiniones, []string{"opinion_id", "sku", "fecha", "puntuacion", "pais", "texto"}, []string{"opinion_id"}}},
		{ListVentasDiariasSKU, Listing{VentasDiariasSKU, []string{"fecha", "sku", "unidades", "importe", "lineas"}, []string{"fecha", "sku"}}},
		{ListPanes, Listing{VentasHoraPaisPaneles, []string{"window_start", "pais", "pane_index", "timing", "importe", "pedidos", "unidades", "watermark", "emitted_at"}, []string{"window_start", "pais", "pane_index"}}},
		// An order too late for several windows or aggregations has a row
		// for each, received together: aggregation and window order them.
		{ListDiscards, Listing{PedidosDescartados, []string{"pedido_id", "aggregation", "reason", "event_time", "window_start", "watermark", "received_at"}, []string{"received_at", "aggregation", "window_start"}}},
	} {
		register(e.name, e.l.From, listingSQL(e.l)).Listing = &e.l
	}
}

func listingSQL(l Listing) string {
	return "SELECT " + strings.Join(l.Columns, ", ") + " FROM " + l.From + " ORDER BY " + strings.Join(l.OrderBy, ", ")
}

// listViewRead lists one declared view (ListView for ventas_hora_pais).
func listViewRead(v View) *NamedQuery {
	// [1:]: every column but aggregation, which View.Columns lists first.
	l := Listing{From: v.Name, Columns: v.Columns()[1:], OrderBy: []string{"window_start", v.Key}}
	q := newRead(viewReadName(ListView, v.Name), l.From, listingSQL(l))
	q.Listing = &l
	return q
}

// ViewListing returns the name of the listing of the declared view name.
func ViewListing(name string) (string, bool) {
	q, ok := viewRead(ListView, name)
	if !ok {
		return "", false
	}
	return q.Name, true
}

// Types are the listed columns' types (a view's from its panes table).
func (l Listing) Types() ([]Type, error) {
	from := l.From
	for _, v := range Views() {
		if v.Name == from {
			from = v.Panes
		}
	}
	t, err := Lookup(from)
	if err != nil {
		return nil, err
	}
	out := make([]Type, len(l.Columns))
	for i, c := range l.Columns {
		j := t.Column(c)
		if j < 0 {
			return nil, fmt.Errorf("listing of %s: no column %s", l.From, c)
		}
		out[i] = t.Schema[j].Type
	}
	return out, nil
}

// ReadListing runs the listing name: its answer and column types.
func ReadListing(ctx context.Context, r Reader, name string) (Result, []Type, error) {
	q, ok := namedReads()[name]
	if !ok || q.Listing == nil {
		return Result{}, nil, fmt.Errorf("no listing %q", name)
	}
	types, err := q.Listing.Types()
	if err != nil {
		return Result{}, nil, err
	}
	res, err := r.Read(ctx, q.statement())
	if err != nil {
		return Result{}, nil, fmt.Errorf("query %s: %w", q.Reads, err)
	}
	if len(res.Columns) != len(q.Listing.Columns) {
		return Result{}, nil, fmt.Errorf("%s: answer has columns %v, want %v", q.Reads, res.Columns, q.Listing.Columns)
	}
	return res, types, nil
}
