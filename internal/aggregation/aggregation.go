// Package aggregation holds the event-time aggregations a deployment runs,
// declared as data: one JSON file per aggregation in declarations/
// (embedded), as the feeds are in internal/contract. Adding an aggregation
// means adding a file; Terraform reads the same files to create its panes
// table and its view. Everything here is pure: no I/O beyond the embedded
// files, no clock.
package aggregation

import (
	"slices"
	"time"

	"github.com/alpinashop/alpipe/internal/window"
)

// Window types a declaration may name.
const (
	Fixed   = "fixed"
	Sliding = "sliding"
	Session = "session"
)

// Keys an aggregation may be keyed by: two order fields, and the SKU of
// each order line (docs/event-time.md, "Keys from lines").
const (
	KeyPais      = "pais"
	KeyClienteID = "cliente_id"
	KeySKU       = "sku"
)

// Keys are the allowed keys, in the order errors list them.
var Keys = []string{KeyPais, KeyClienteID, KeySKU}

// Measures are the measures every panes table carries, in column order.
// The core computes all three for every cell and every panes table has the
// three as REQUIRED columns, so a declaration lists all three: a subset
// would promise a table without a column that is in fact there and filled.
var Measures = []string{"importe", "pedidos", "unidades"}

// PanesSuffix ends the name of every panes table.
const PanesSuffix = "_paneles"

// PanesTable is the name of the panes table of the aggregation name; its
// view is named name itself.
func PanesTable(name string) string { return name + PanesSuffix }

// Declaration is one validated aggregation. It is a value: callers may copy
// it freely.
type Declaration struct {
	// File is the embedded file it was read from, e.g.
	// declarations/ventas_hora_pais.json.
	File        string
	Name        string
	Description string
	// WindowType is Fixed, Sliding or Session. Period is 0 but for
	// sliding windows; Size is 0 and Gap positive for session windows.
	WindowType string
	Size       time.Duration
	Period     time.Duration
	Gap        time.Duration
	Key        string
	Measures   []string
	// D, I, E, L and Ld of docs/event-time.md.
	OutOfOrderness  time.Duration
	IdleTimeout     time.Duration
	EarlyDelay      time.Duration
	AllowedLateness time.Duration
	LateDelay       time.Duration
	Accumulation    window.Accumulation
}

// PanesTable is the name of the aggregation's panes table.
func (d Declaration) PanesTable() string { return PanesTable(d.Name) }

// View is the name of the aggregation's dashboard view.
func (d Declaration) View() string { return d.Name }

// Spec is the core's specification of the aggregation.
func (d Declaration) Spec() window.Spec {
	return window.Spec{
		Name:            d.Name,
		KeyField:        d.Key,
		WindowSize:      d.Size,
		Period:          d.Period,
		Gap:             d.Gap,
		OutOfOrderness:  d.OutOfOrderness,
		IdleTimeout:     d.IdleTimeout,
		EarlyDelay:      d.EarlyDelay,
		AllowedLateness: d.AllowedLateness,
		LateDelay:       d.LateDelay,
		Accumulation:    d.Accumulation,
	}
}

func (d Declaration) clone() Declaration {
	d.Measures = slices.Clone(d.Measures)
	return d
}
