package windowtest

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/alpinashop/alpipe/internal/numeric"
	"github.com/alpinashop/alpipe/internal/order"
	"github.com/alpinashop/alpipe/internal/window"
)

// DefaultSKUs are the SKUs of MultiStream's lines unless StreamConfig.SKUs
// says otherwise.
var DefaultSKUs = []string{"MOCH-40L-AZ", "BOTA-TREK-42", "GORRO-LANA"}

// MultiStream is Stream for whole orders and several aggregations, each
// event timed by one of the specs. Orders have zero to four lines: SKUs
// with stray case and spaces, two lines of one SKU, lines without a SKU,
// prices with three decimals, and importe_total sometimes beyond the lines'
// sum (shipping).
func MultiStream(r *rand.Rand, specs []window.Spec, cfg StreamConfig) []MultiEvent {
	if len(specs) == 0 {
		panic("windowtest.MultiStream: no aggregation")
	}
	cfg = cfg.withDefaults()
	return events(r, cfg, specs, func() gen { return gen{r: r, spec: pick(r, specs...)} },
		func(g gen, now time.Time, _, n int, msg string) MultiEvent {
			e := MultiEvent{Kind: Deliver, Now: now, MessageID: msg, Order: g.order(fmt.Sprintf("P-%06d", n), now, cfg)}
			if r.IntN(100) < 6 {
				e.Order.PedidoID = fmt.Sprintf("X-%06d", n)
				e.Invalid = InvalidReasons[r.IntN(len(InvalidReasons))]
			}
			return e
		})
}

func (g gen) order(id string, now time.Time, cfg StreamConfig) order.Order {
	o := order.Order{
		PedidoID:  id,
		ClienteID: fmt.Sprintf("C-%d", 1+g.r.IntN(5)),
		Pais:      cfg.Keys[g.r.IntN(len(cfg.Keys))],
		EventTime: g.eventTime(now, cfg.Start).UTC(),
	}
	n := 1 + g.r.IntN(4)
	if g.r.IntN(25) == 0 {
		n = 0
	}
	var total numeric.Dec
	for range n {
		l := order.Line{SKU: cfg.SKUs[g.r.IntN(len(cfg.SKUs))], Cantidad: 1 + g.r.Int64N(3)}
		switch p := g.r.IntN(100); {
		case p < 6:
			l.SKU = ""
		case p < 9:
			l.SKU = "  "
		case p < 24:
			l.SKU = strings.ToLower(l.SKU)
		case p < 34:
			l.SKU = " " + l.SKU + "\t"
		}
		if g.r.IntN(5) == 0 {
			l.PrecioUnitario = numeric.FromNanos((1 + g.r.Int64N(500_000)) * 1_000_000) // 0.001 to 500.000
		} else {
			l.PrecioUnitario = numeric.FromNanos((1 + g.r.Int64N(50_000)) * 10_000_000) // 0.01 to 500.00
		}
		amount, err := l.PrecioUnitario.MulInt(l.Cantidad)
		if err == nil {
			total, err = total.Add(amount)
		}
		if err != nil {
			panic(err) // small values cannot overflow
		}
		o.Lineas = append(o.Lineas, l)
	}
	if g.r.IntN(2) == 0 {
		var err error
		if total, err = total.Add(numeric.FromNanos(4_950_000_000)); err != nil { // shipping 4.95
			panic(err)
		}
	}
	o.ImporteTotal = total
	return o
}

// ShippedSpecs are the aggregations the deployment ships, in name order, as
// aggregation's TestShippedDeclarations holds the declarations to.
func ShippedSpecs() []window.Spec {
	pais := window.Defaults()
	sku := window.Defaults()
	sku.Name, sku.KeyField, sku.Period = "ventas_sku_hora_movil", KeySKU, 15*time.Minute
	return []window.Spec{SessionSpec(), pais, sku}
}

// RandomSpecs returns one to three valid aggregations, fixed or sliding,
// each with its own key and delays drawn as RandomSpec draws them.
func RandomSpecs(r *rand.Rand) []window.Spec {
	type shape struct{ size, period time.Duration }
	shapes := []shape{
		{time.Hour, 15 * time.Minute}, {time.Hour, 20 * time.Minute}, {10 * time.Minute, 5 * time.Minute},
		{21 * time.Minute, 7 * time.Minute}, {90 * time.Second, 30 * time.Second}, {10 * time.Minute, 2 * time.Minute},
		{time.Hour, 0}, {7 * time.Minute, 0}, {25 * time.Minute, 0},
	}
	n := 1 + r.IntN(3)
	specs := make([]window.Spec, n)
	for i := range specs {
		s := RandomSpec(r)
		sh := pick(r, shapes...)
		s.Name = fmt.Sprintf("agg_%d", i)
		s.KeyField = pick(r, KeyPais, KeyClienteID, KeySKU, KeySKU)
		s.WindowSize, s.Period = sh.size, sh.period
		specs[i] = s
	}
	return specs
}

// SessionSpec is the shipped session aggregation, sesiones_cliente.
func SessionSpec() window.Spec {
	s := window.Defaults()
	s.Name, s.KeyField, s.WindowSize, s.Gap = "sesiones_cliente", KeyClienteID, 0, 30*time.Minute
	return s
}

// RandomKinds returns a fixed, a sliding and a session aggregation, with
// session gaps short and long against the streams' gaps so that merges,
// bridges and extensions after ON_TIME are frequent.
func RandomKinds(r *rand.Rand) []window.Spec {
	fixed, sliding, sess := RandomSpec(r), RandomSpec(r), RandomSpec(r)
	fixed.Name, fixed.KeyField = "agg_fixed", pick(r, KeyPais, KeyClienteID, KeySKU)
	sliding.Name, sliding.KeyField = "agg_sliding", pick(r, KeyPais, KeyClienteID, KeySKU)
	sliding.WindowSize = pick(r, time.Hour, 10*time.Minute, 21*time.Minute)
	sliding.Period = sliding.WindowSize / time.Duration(pick(r, 2, 3, 4))
	sess.Name, sess.KeyField = "agg_session", pick(r, KeyClienteID, KeyPais)
	sess.WindowSize, sess.Gap = 0, pick(r, 90*time.Second, 5*time.Minute, 10*time.Minute, 30*time.Minute)
	return []window.Spec{fixed, sliding, sess}
}
