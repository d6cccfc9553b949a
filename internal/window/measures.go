package window

import (
	"errors"
	"fmt"

	"github.com/alpinashop/alpipe/internal/numeric"
)

// ErrOverflow reports a measure that left its range while adding or
// subtracting; the order or pane that caused it is rejected, never wrapped.
var ErrOverflow = errors.New("measure out of range")

// Measures are the aggregated values of a set of orders.
type Measures struct {
	Importe  numeric.Dec `json:"importe"`  // exact sum of importe_total
	Pedidos  int64       `json:"pedidos"`  // number of orders
	Unidades int64       `json:"unidades"` // sum of line quantities
}

// OrderMeasures returns one order's contribution: its total, a count of one,
// and the sum of its line quantities.
func OrderMeasures(importeTotal numeric.Dec, quantities ...int64) (Measures, error) {
	m := Measures{Importe: importeTotal, Pedidos: 1}
	for _, q := range quantities {
		u, err := addInt("unidades", m.Unidades, q)
		if err != nil {
			return Measures{}, err
		}
		m.Unidades = u
	}
	return m, nil
}

// Add returns m+o.
func (m Measures) Add(o Measures) (Measures, error) {
	imp, err := m.Importe.Add(o.Importe)
	if err != nil {
		return Measures{}, fmt.Errorf("importe %s + %s: %w: %w", m.Importe, o.Importe, ErrOverflow, err)
	}
	ped, err := addInt("pedidos", m.Pedidos, o.Pedidos)
	if err != nil {
		return Measures{}, err
	}
	uni, err := addInt("unidades", m.Unidades, o.Unidades)
	if err != nil {
		return Measures{}, err
	}
	return Measures{Importe: imp, Pedidos: ped, Unidades: uni}, nil
}

// Sub returns m-o.
func (m Measures) Sub(o Measures) (Measures, error) {
	imp, err := m.Importe.Sub(o.Importe)
	if err != nil {
		return Measures{}, fmt.Errorf("importe %s - %s: %w: %w", m.Importe, o.Importe, ErrOverflow, err)
	}
	ped, err := subInt("pedidos", m.Pedidos, o.Pedidos)
	if err != nil {
		return Measures{}, err
	}
	uni, err := subInt("unidades", m.Unidades, o.Unidades)
	if err != nil {
		return Measures{}, err
	}
	return Measures{Importe: imp, Pedidos: ped, Unidades: uni}, nil
}

// IsZero reports whether every measure is zero.
func (m Measures) IsZero() bool { return m == Measures{} }

func addInt(field string, a, b int64) (int64, error) {
	s := a + b
	if (s > a) != (b > 0) {
		return 0, fmt.Errorf("%s %d + %d: %w", field, a, b, ErrOverflow)
	}
	return s, nil
}

func subInt(field string, a, b int64) (int64, error) {
	s := a - b
	if (s < a) != (b > 0) {
		return 0, fmt.Errorf("%s %d - %d: %w", field, a, b, ErrOverflow)
	}
	return s, nil
}
