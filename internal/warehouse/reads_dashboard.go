package warehouse

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/alpinashop/alpipe/internal/numeric"
)

// ReasonTooLate is the reason of too-late drops (stream.ReasonTooLate; a
// test keeps them equal); an invalid message's is "invalid: ...".
const ReasonTooLate = "too_late"

// Unbounded ends of a time range: BigQuery's TIMESTAMP range (MinTime is
// the zero time.Time).
var (
	MinTime = time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)
	MaxTime = time.Date(9999, 12, 31, 23, 59, 59, 999999000, time.UTC)
)

// HourlySale is one (window, key) row of the dashboard view.
type HourlySale struct {
	WindowStart time.Time
	WindowEnd   time.Time
	Pais        string
	Importe     numeric.Dec
	Pedidos     int64
	Unidades    int64
	Timing      string // EARLY, ON_TIME or LATE
	PaneIndex   int64
}

var hourlySaleColumns = []string{"window_start", "window_end", "pais", "importe", "pedidos", "unidades", "timing", "pane_index"}

func hourlySale(key string) func(c *cells) HourlySale {
	return func(c *cells) HourlySale {
		return HourlySale{
			WindowStart: c.time("window_start"), WindowEnd: c.time("window_end"), Pais: c.str(key),
			Importe: c.dec("importe"), Pedidos: c.int("pedidos"), Unidades: c.int("unidades"),
			Timing: c.str("timing"), PaneIndex: c.int("pane_index"),
		}
	}
}

// NewestWindows asks for the rows of the newest Windows window starts of
// Aggregation in view View (empty: VentasHoraPais) starting in [From,
// Until) (zero: unbounded) and, unless Keys is empty, of those keys. A
// LIMIT rather than a time range, so a quiet night does not empty the chart.
type NewestWindows struct {
	View        string
	Aggregation string
	Windows     int
	From, Until time.Time
	Keys        []string
}

// newestWindowsRead is the newest-windows read of one declared view.
func newestWindowsRead(v View) *NamedQuery {
	return newRead(viewReadName("newest_windows", v.Name), v.Name,
		"SELECT v.window_start, v.window_end, v."+v.Key+", v.importe, v.pedidos, v.unidades, v.timing, v.pane_index\n"+
			"FROM "+v.Name+" AS v\n"+
			"JOIN (\n"+
			"  SELECT DISTINCT window_start FROM "+v.Name+"\n"+
			"  WHERE aggregation = @aggregation AND window_start >= @start_time AND window_start < @end_time\n"+
			"    AND (@any_key = 1 OR "+v.Key+" IN UNNEST(@keys))\n"+
			"  ORDER BY window_start DESC LIMIT @max_windows\n"+
			") AS w ON v.window_start = w.window_start\n"+
			"WHERE v.aggregation = @aggregation AND v.window_start >= @start_time AND v.window_start < @end_time\n"+
			"  AND (@any_key = 1 OR v."+v.Key+" IN UNNEST(@keys))\n"+
			"ORDER BY v.window_start, v."+v.Key,
		ParamSpec{Name: "aggregation", Type: String},
		ParamSpec{Name: "start_time", Type: Timestamp},
		ParamSpec{Name: "end_time", Type: Timestamp},
		ParamSpec{Name: "any_key", Type: Int64},
		ParamSpec{Name: "keys", Type: String, Array: true},
		ParamSpec{Name: "max_windows", Type: Int64},
	)
}

// ViewKey returns the key column of the declared view name.
func ViewKey(name string) (string, bool) {
	q, ok := viewRead("newest_windows", name)
	if !ok {
		return "", false
	}
	return q.View.Key, true
}

// ReadNewestWindows runs NewestWindows: rows by window start, then key,
// Pais holding the key's value.
func ReadNewestWindows(ctx context.Context, r Reader, q NewestWindows) ([]HourlySale, error) {
	view := cmp.Or(q.View, VentasHoraPais)
	nq, ok := viewRead("newest_windows", view)
	if !ok {
		return nil, fmt.Errorf("read newest windows: %q is not the view of a declared aggregation (internal/aggregation)", view)
	}
	from, until := q.From, orMax(q.Until)
	anyKey := int64(0)
	if len(q.Keys) == 0 {
		anyKey = 1
	}
	keys := make([]Value, len(q.Keys))
	for i, k := range q.Keys {
		keys[i] = StringValue(k)
	}
	s := nq.statement(one(StringValue(q.Aggregation)), one(TimeValue(from)), one(TimeValue(until)),
		one(IntValue(anyKey)), keys, one(IntValue(int64(q.Windows))))
	key := nq.View.Key
	cols := slices.Clone(hourlySaleColumns)
	cols[slices.Index(cols, "pais")] = key
	return run(ctx, r, s, cols, hourlySale(key))
}

// Discard is one row of pedidos_descartados, less the raw message.
type Discard struct {
	PedidoID    string    `json:"pedido_id,omitempty"`   // "" when the message could not be parsed
	Reason      string    `json:"reason"`                // "invalid: ..." or ReasonTooLate
	EventTime   time.Time `json:"event_time,omitzero"`   // zero when unknown
	WindowStart time.Time `json:"window_start,omitzero"` // zero for an invalid message
	ReceivedAt  time.Time `json:"received_at"`
}

// discardOf reads a Discard off a row holding its columns by name (the
// summary's rows, DayDrop's); a NULL time reads as the zero time.
func discardOf(c *cells) Discard {
	return Discard{PedidoID: c.str("pedido_id"), Reason: c.str("reason"),
		EventTime: c.time("event_time"), WindowStart: c.time("window_start"),
		ReceivedAt: c.time("received_at")}
}

// DiscardSummary counts the dead letters and too-late drops, lists the
// newest of each, and the countries of the view's windows.
type DiscardSummary struct {
	DeadLetters, TooLate             int64
	LatestDeadLetters, LatestTooLate []Discard
	Countries                        []string
}

// DiscardSummaryQuery asks for the discard summary of Aggregation, with
// the Latest newest discards of each kind. Each part is bounded on its
// table's partitioning column, so that BigQuery reads only those days: the
// discards received since Since, the windows starting in [From, Until). A
// zero bound reads every partition.
type DiscardSummaryQuery struct {
	Aggregation string
	Latest      int
	Since       time.Time
	From, Until time.Time
}

var discardSummaryQuery = func() *NamedQuery {
	kind := "CASE WHEN reason = '" + ReasonTooLate + "' THEN 'too_late' ELSE 'dead_letter' END"
	mine := "WHERE received_at >= @since AND (reason <> '" + ReasonTooLate + "' OR aggregation = @aggregation)"
	// One statement, one BigQuery job per refresh. The QUALIFY sits in a
	// subquery so no dialect has to decide which member of the UNION it
	// belongs to.
	return register("discard_summary", PedidosDescartados,
		"SELECT 'count' AS kind, "+kind+" AS what, COUNT(*) AS n,\n"+
			"  CAST(NULL AS STRING) AS pedido_id, CAST(NULL AS STRING) AS reason, CAST(NULL AS TIMESTAMP) AS event_time,\n"+
			"  CAST(NULL AS TIMESTAMP) AS window_start, MAX(received_at) AS received_at\n"+
			"FROM "+PedidosDescartados+"\n"+mine+"\n"+
			"GROUP BY what\n"+
			"UNION ALL\n"+
			"SELECT * FROM (\n"+
			"  SELECT 'row' AS kind, "+kind+" AS what, 0 AS n, pedido_id, reason, event_time, window_start, received_at\n"+
			"  FROM "+PedidosDescartados+"\n  "+mine+"\n"+
			"  QUALIFY ROW_NUMBER() OVER (PARTITION BY "+kind+" ORDER BY received_at DESC) <= @max_latest\n"+
			") AS latest\n"+
			"UNION ALL\n"+
			"SELECT 'country' AS kind, pais AS what, COUNT(*) AS n,\n"+
			"  CAST(NULL AS STRING) AS pedido_id, CAST(NULL AS STRING) AS reason, CAST(NULL AS TIMESTAMP) AS event_time,\n"+
			"  CAST(NULL AS TIMESTAMP) AS window_start, CAST(NULL AS TIMESTAMP) AS received_at\n"+
			"FROM "+VentasHoraPais+"\n"+
			"WHERE aggregation = @aggregation AND window_start >= @start_time AND window_start < @end_time\n"+
			"GROUP BY pais",
		ParamSpec{Name: "aggregation", Type: String},
		ParamSpec{Name: "max_latest", Type: Int64},
		ParamSpec{Name: "since", Type: Timestamp},
		ParamSpec{Name: "start_time", Type: Timestamp},
		ParamSpec{Name: "end_time", Type: Timestamp},
	)
}()

var discardSummaryColumns = []string{"kind", "what", "n", "pedido_id", "reason", "event_time", "window_start", "received_at"}

// ReadDiscardSummary runs q; ties of the newest go by pedido_id.
func ReadDiscardSummary(ctx context.Context, r Reader, q DiscardSummaryQuery) (DiscardSummary, error) {
	s := discardSummaryQuery.statement(one(StringValue(q.Aggregation)), one(IntValue(int64(q.Latest))),
		one(TimeValue(q.Since)), one(TimeValue(q.From)), one(TimeValue(orMax(q.Until))))
	sum := DiscardSummary{LatestDeadLetters: []Discard{}, LatestTooLate: []Discard{}, Countries: []string{}}
	_, err := run(ctx, r, s, discardSummaryColumns, func(c *cells) struct{} {
		kind, what := c.str("kind"), c.str("what")
		switch {
		case kind == "count" && what == "too_late":
			sum.TooLate = c.int("n")
		case kind == "count":
			sum.DeadLetters = c.int("n")
		case kind == "row":
			d := discardOf(c)
			if d.ReceivedAt.IsZero() {
				c.errs = append(c.errs, fmt.Sprintf("received_at %q: not an RFC 3339 time", c.raw("received_at")))
			}
			if what == "too_late" {
				sum.LatestTooLate = append(sum.LatestTooLate, d)
			} else {
				sum.LatestDeadLetters = append(sum.LatestDeadLetters, d)
			}
		case kind == "country":
			sum.Countries = append(sum.Countries, what)
		default:
			c.errs = append(c.errs, fmt.Sprintf("kind %q: want count, row or country", kind))
		}
		return struct{}{}
	})
	if err != nil {
		return DiscardSummary{}, err
	}
	newest := func(a, b Discard) int {
		return cmp.Or(b.ReceivedAt.Compare(a.ReceivedAt), cmp.Compare(a.PedidoID, b.PedidoID))
	}
	slices.SortFunc(sum.LatestDeadLetters, newest)
	slices.SortFunc(sum.LatestTooLate, newest)
	slices.Sort(sum.Countries)
	return sum, nil
}

func orMax(t time.Time) time.Time {
	if t.IsZero() {
		return MaxTime
	}
	return t
}

func run[T any](ctx context.Context, r Reader, s Statement, cols []string, f func(c *cells) T) ([]T, error) {
	if r == nil {
		return nil, fmt.Errorf("query %s: no warehouse", s.q.Reads)
	}
	res, err := r.Read(ctx, s)
	if err != nil {
		return nil, fmt.Errorf("query %s: %w", s.q.Reads, err)
	}
	return scan(s.q.Reads, res, cols, f)
}
