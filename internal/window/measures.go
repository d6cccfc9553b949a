package window

import (
	"errors"
	"fmt"

	"github.com/alpinashop/alpipe/internal/numeric"
)

// ErrOverflow reports a measure out of range: the order or pane that caused
// it is rejected, never wrapped.
var ErrOverflow = errors.New("measure out of range")

// Measures are the aggregated values of a set of orders.
type Measures struct {
	Importe  numeric.Dec `json:"importe"`  // exact sum of importe_total
	Pedidos  int64       `json:"pedidos"`  // number of orders
	Unidades int64       `json:"unidades"` // sum of line quantities
}

// OrderMeasures returns one order's contribution.
func OrderMeasures(importeTotal numeric.Dec, quantities ...int64) (Measures, error) {
	m := Measures{Importe: importeTotal, Pedidos: 1}
	for _, q := range quantities {
		u, err := intOp("unidades", "+", m.Unidades, q)
		if err != nil {
			return Measures{}, err
		}
		m.Unidades = u
	}
	return m, nil
}

// Add returns m+o.
func (m Measures) Add(o Measures) (Measures, error) { return m.apply("+", o, m.Importe.Add) }

// Sub returns m-o.
func (m Measures) Sub(o Measures) (Measures, error) { return m.apply("-", o, m.Importe.Sub) }

func (m Measures) apply(op string, o Measures, importe func(numeric.Dec) (numeric.Dec, error)) (Measures, error) {
	imp, err := importe(o.Importe)
	if err != nil {
		return Measures{}, fmt.Errorf("importe %s %s %s: %w: %w", m.Importe, op, o.Importe, ErrOverflow, err)
	}
	ped, err := intOp("pedidos", op, m.Pedidos, o.Pedidos)
	if err != nil {
		return Measures{}, err
	}
	uni, err := intOp("unidades", op, m.Unidades, o.Unidades)
	if err != nil {
		return Measures{}, err
	}
	return Measures{Importe: imp, Pedidos: ped, Unidades: uni}, nil
}

// IsZero reports whether every measure is zero.
func (m Measures) IsZero() bool { return m == Measures{} }

// intOp returns a+b or a-b (op "+" or "-"), or ErrOverflow.
func intOp(field, op string, a, b int64) (int64, error) {
	s, ok := a+b, (a+b > a) == (b > 0)
	if op == "-" {
		s, ok = a-b, (a-b < a) == (b > 0)
	}
	if !ok {
		return 0, fmt.Errorf("%s %d %s %d: %w", field, a, op, b, ErrOverflow)
	}
	return s, nil
}
