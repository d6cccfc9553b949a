package stream

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/alpinashop/alpipe/internal/order"
	"github.com/alpinashop/alpipe/internal/window"
)

// KeySKU is the key field whose values come from the order's lines, not from
// the order: one element per distinct SKU (docs/event-time.md, "Keys from
// lines").
const KeySKU = "sku"

// ReasonSKUMissing is the pedidos_descartados reason of a line without a
// SKU in an aggregation keyed by sku.
const ReasonSKUMissing = "sku_missing"

// element is what one order adds to one (window, key) of one aggregation.
type element struct {
	wk window.WindowKey
	ms window.Measures
}

// elementsOf turns a valid order into the elements of aggregation s (see
// the package comment), ascending by key, then by window start; ms is the
// order's own measures. An error is a sum out of range: no retry makes the
// order countable, so it is invalid.
func elementsOf(s window.Spec, o order.Order, ms window.Measures) (els []element, missing []int, err error) {
	ws := s.WindowsOf(o.EventTime)
	if s.KeyField != KeySKU {
		key, _ := o.Field(s.KeyField) // New checked the field
		for _, w := range ws {
			els = append(els, element{wk: window.WindowKey{Window: w, Key: key}, ms: ms})
		}
		return els, nil, nil
	}
	bySKU := map[string]window.Measures{}
	for i, l := range o.Lineas {
		sku := strings.ToUpper(strings.TrimSpace(l.SKU))
		if sku == "" {
			missing = append(missing, i)
			continue
		}
		imp, err := l.PrecioUnitario.MulInt(l.Cantidad)
		if err != nil {
			return nil, nil, fmt.Errorf("lineas[%d]: cantidad %d x precio_unitario %s: %w", i, l.Cantidad, l.PrecioUnitario, err)
		}
		line := window.Measures{Importe: imp, Unidades: l.Cantidad}
		sum, err := bySKU[sku].Add(line)
		if err != nil {
			return nil, nil, fmt.Errorf("sku %s: %w", sku, err)
		}
		sum.Pedidos = 1 // distinct orders: two lines of one SKU count once
		bySKU[sku] = sum
	}
	for _, k := range slices.Sorted(maps.Keys(bySKU)) {
		for _, w := range ws {
			els = append(els, element{wk: window.WindowKey{Window: w, Key: k}, ms: bySKU[k]})
		}
	}
	return els, missing, nil
}

func keyFieldOK(field string) bool {
	if field == KeySKU {
		return true
	}
	_, ok := (order.Order{}).Field(field)
	return ok
}
