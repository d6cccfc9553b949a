package warehouse

import (
	"context"
	"time"
)

// DiscardCounts counts the discards by kind: all, and those since a time.
type DiscardCounts struct {
	InvalidTotal, Invalid int64
	TooLateTotal, TooLate int64
}

var discardCountsQuery = register("discard_counts", PedidosDescartados,
	"SELECT CASE WHEN reason = '"+ReasonTooLate+"' THEN 'too_late' ELSE 'invalid' END AS kind, "+
		"COUNT(*) AS total, SUM(CASE WHEN received_at >= @since THEN 1 ELSE 0 END) AS recent "+
		"FROM "+PedidosDescartados+" GROUP BY 1",
	ParamSpec{Name: "since", Type: Timestamp},
)

// ReadDiscardCounts counts the discards, and those received since since.
func ReadDiscardCounts(ctx context.Context, r Reader, since time.Time) (DiscardCounts, error) {
	var d DiscardCounts
	s := discardCountsQuery.statement(one(TimeValue(since)))
	_, err := run(ctx, r, s, []string{"kind", "total", "recent"}, func(c *cells) struct{} {
		if c.str("kind") == "too_late" {
			d.TooLateTotal, d.TooLate = c.int("total"), c.int("recent")
		} else {
			d.InvalidTotal, d.Invalid = c.int("total"), c.int("recent")
		}
		return struct{}{}
	})
	if err != nil {
		return DiscardCounts{}, err
	}
	return d, nil
}

// ReasonCount is how many discards gave one reason.
type ReasonCount struct {
	Reason string
	Count  int64
}

var discardReasonsQuery = register("discard_reasons", PedidosDescartados,
	"SELECT reason, COUNT(*) AS n FROM "+PedidosDescartados+
		" WHERE received_at >= @since GROUP BY reason ORDER BY n DESC, reason LIMIT @max_reasons",
	ParamSpec{Name: "since", Type: Timestamp},
	ParamSpec{Name: "max_reasons", Type: Int64},
)

// ReadDiscardReasons lists the limit most frequent reasons of the discards
// since since, then by reason.
func ReadDiscardReasons(ctx context.Context, r Reader, since time.Time, limit int) ([]ReasonCount, error) {
	s := discardReasonsQuery.statement(one(TimeValue(since)), one(IntValue(int64(limit))))
	return run(ctx, r, s, []string{"reason", "n"}, func(c *cells) ReasonCount {
		return ReasonCount{Reason: c.str("reason"), Count: c.int("n")}
	})
}
