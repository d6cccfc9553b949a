package dashboard_test

import (
	"context"
	"fmt"
	"time"

	"github.com/alpinashop/alpipe/internal/dashboard"
	"github.com/alpinashop/alpipe/internal/numeric"
)

// step is one moment of the story both the engine test and the browser test
// play: at processing time At, either an order arrives or the timer ticks.
type step struct {
	At        time.Time
	Tick      bool
	PedidoID  string
	Pais      string
	Importe   string // importe_total; one line of Cantidad units at Importe/Cantidad
	Precio    string
	Cantidad  int64
	EventTime time.Time
}

func (s step) body() []byte {
	return fmt.Appendf(nil, `{"pedido_id":%q,"cliente_id":"C-1","pais":%q,"importe_total":%q,"lineas":[{"sku":"MOCH-40L-AZ","cantidad":%d,"precio_unitario":%q}]}`,
		s.PedidoID, s.Pais, s.Importe, s.Cantidad, s.Precio)
}

func at(hhmm string) time.Time {
	t, err := time.Parse("2006-01-02 15:04", "2026-03-14 "+hhmm)
	if err != nil {
		panic(err)
	}
	return t.UTC()
}

func pedido(arrival, id, pais, importe, precio string, cantidad int64, event string) step {
	return step{At: at(arrival), PedidoID: id, Pais: pais, Importe: importe, Precio: precio, Cantidad: cantidad, EventTime: at(event)}
}

func tick(hhmm string) step { return step{At: at(hhmm), Tick: true} }

// The story, with the defaults (1 h windows, D = 10 min, I = 5 min,
// E = 60 s, L = 2 h, Ld = 0), in two acts so the browser test can watch the
// page change by itself between them.
//
// Act 1: two orders in the 17:00 window; at 17:25 the source has been idle
// for 25 min, so W = 17:25 - D = 17:15 < 18:00 and both get an EARLY pane.
var act1 = []step{
	pedido("17:00", "P-1", "ES", "100.10", "50.05", 2, "17:10"),
	pedido("17:00", "P-2", "PT", "50.05", "50.05", 1, "17:20"),
	tick("17:25"),
}

// Act 2: orders at 18:05 and 18:10 arrive at 18:20, so the tick sets
// W = 18:10 - D = 18:00 and closes the 17:00 window: ON_TIME panes. A PT
// order of 17:40 arriving at 18:21 is late but within L: with Ld = 0 its
// LATE correction is written at once (PT 17:00 = 60.05). At 18:22 the new
// window's first change is 2 min old: EARLY panes for FR and ES. W stays
// 18:00 (M = 18:10), so the lag at 18:22 is 22 min.
var act2 = []step{
	pedido("18:20", "P-3", "FR", "20.00", "20.00", 1, "18:05"),
	pedido("18:20", "P-4", "ES", "30.00", "10.00", 3, "18:10"),
	tick("18:20"),
	pedido("18:21", "P-5", "PT", "10.00", "10.00", 1, "17:40"),
	tick("18:22"),
}

func mustDec(s string) numeric.Dec {
	d, err := numeric.Parse(s, false)
	if err != nil {
		panic(err)
	}
	return d
}

func wantBar(start, pais, importe string, pedidos, unidades int64, timing string, pane int64) dashboard.Bar {
	return dashboard.Bar{WindowStart: at(start), WindowEnd: at(start).Add(time.Hour), Pais: pais, Importe: mustDec(importe),
		Pedidos: pedidos, Unidades: unidades, Timing: timing, PaneIndex: pane}
}

// wantAct1 and wantAct2 are the view after each act, in the page's order
// (window, then country).
var (
	wantAct1 = []dashboard.Bar{
		wantBar("17:00", "ES", "100.1", 1, 2, "EARLY", 0),
		wantBar("17:00", "PT", "50.05", 1, 1, "EARLY", 0),
	}
	wantAct2 = []dashboard.Bar{
		wantBar("17:00", "ES", "100.1", 1, 2, "ON_TIME", 1),
		wantBar("17:00", "PT", "60.05", 2, 2, "LATE", 2),
		wantBar("18:00", "ES", "30", 1, 3, "EARLY", 0),
		wantBar("18:00", "FR", "20", 1, 1, "EARLY", 0),
	}
	wantWatermark = dashboard.Watermark{At: at("18:00"), LagSeconds: 22 * 60}
)

// driver plays steps against some deployment of the pipeline.
type driver interface {
	order(ctx context.Context, s step) error
	tick(ctx context.Context, now time.Time) error
}

func play(ctx context.Context, d driver, steps []step) error {
	for _, s := range steps {
		var err error
		if s.Tick {
			err = d.tick(ctx, s.At)
		} else {
			err = d.order(ctx, s)
		}
		if err != nil {
			return fmt.Errorf("step at %s: %w", s.At.Format("15:04"), err)
		}
	}
	return nil
}
