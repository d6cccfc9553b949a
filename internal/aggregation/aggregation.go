// Package aggregation holds the event-time aggregations a deployment runs,
// declared as data, one embedded JSON file each in declarations/, which
// Terraform reads too to create their tables and views.
package aggregation

import (
	"slices"

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

// Declaration is one validated aggregation: its window.Spec (D, I, E, L
// and Ld of docs/event-time.md) and what only the declaration says.
type Declaration struct {
	window.Spec
	File        string // e.g. declarations/ventas_hora_pais.json
	Description string
	WindowType  string // Fixed, Sliding or Session
	Measures    []string
}

func (d Declaration) PanesTable() string { return PanesTable(d.Name) }

// View is the name of the aggregation's dashboard view.
func (d Declaration) View() string { return d.Name }

func (d Declaration) clone() Declaration {
	d.Measures = slices.Clone(d.Measures)
	return d
}
