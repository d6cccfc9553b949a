// Package aggregation holds the event-time aggregations a deployment runs,
// declared as data, one embedded JSON file each in declarations/, which
// Terraform reads too to create their tables and views.
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

// Keys an aggregation may be keyed by: two order fields, and each line's SKU.
const (
	KeyPais      = "pais"
	KeyClienteID = "cliente_id"
	KeySKU       = "sku"
)

// Keys are the allowed keys, in the order errors list them.
var Keys = []string{KeyPais, KeyClienteID, KeySKU}

// Measures are the measures every panes table carries, in column order: a
// declaration lists all three, as a subset would promise a table without a
// column that is in fact there and filled.
var Measures = []string{"importe", "pedidos", "unidades"}

// PanesSuffix ends the name of every panes table.
const PanesSuffix = "_paneles"

// PanesTable is the name of the panes table of the aggregation name.
func PanesTable(name string) string { return name + PanesSuffix }

// Declaration is one validated aggregation.
type Declaration struct {
	File        string // e.g. declarations/ventas_hora_pais.json
	Name        string
	Description string
	WindowType  string // Fixed, Sliding or Session
	Size        time.Duration
	Period      time.Duration
	Gap         time.Duration
	Key         string
	Measures    []string
	// D, I, E, L and Ld of docs/event-time.md.
	OutOfOrderness  time.Duration
	IdleTimeout     time.Duration
	EarlyDelay      time.Duration
	AllowedLateness time.Duration
	LateDelay       time.Duration
	Accumulation    window.Accumulation
}

func (d Declaration) PanesTable() string { return PanesTable(d.Name) }

// View is the name of the aggregation's dashboard view.
func (d Declaration) View() string { return d.Name }

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
