package replay

import (
	"testing"
	"time"

	"github.com/alpinashop/alpipe/internal/contract"
	"github.com/alpinashop/alpipe/internal/ingest/ingesttest"
	"github.com/alpinashop/alpipe/internal/replay/replaytest"
	"github.com/alpinashop/alpipe/internal/window"
)

// replayStart is the processing time tests start replays at.
var replayStart = time.Date(2026, 3, 20, 9, 0, 0, 0, time.UTC)

func options(t testing.TB, specs ...window.Spec) Options {
	if len(specs) == 0 {
		specs = []window.Spec{window.Defaults()}
	}
	return Options{
		Specs: specs, IsCountry: contract.IsCountry, TempDir: t.TempDir(),
		Now: func() time.Time { return replayStart },
	}
}

// panesQuery lists the panes table in a stable order, without emitted_at
// and watermark, which the replay's clock decides.
const panesQuery = "SELECT aggregation, window_start, window_end, pais, importe, pedidos, unidades, pane_index, timing, accumulation " +
	"FROM ventas_hora_pais_paneles ORDER BY aggregation, window_start, pais, pane_index"

// The fixtures are shared with reconcile's tests (see replaytest).
var (
	openWarehouse = replaytest.OpenWarehouse
	loadLines     = replaytest.LoadLines[line]
	dec           = replaytest.Dec
	golden        = replaytest.Golden
	query         = ingesttest.Query
)

// line is one lineas_pedido row of a fixture: pedido, pais, fecha,
// cantidad, precio.
type line replaytest.Line
