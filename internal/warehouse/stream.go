package warehouse

import "context"

// RowSink receives a query's answer while it is read, so that millions of
// rows never have to fit in memory: Columns once, then Row per row, whose
// cells are valid during the call only. An error from either stops the
// query and comes back wrapped from QueryRows, so a sink can end an answer
// early with a sentinel of its own.
type RowSink interface {
	Columns(names []string) error
	Row(cells []string) error
}

// RowStreamer runs a read-only query like Querier and hands its answer to
// a sink row by row. Cancelling ctx stops the query in the engine.
type RowStreamer interface {
	QueryRows(ctx context.Context, sql string, sink RowSink) error
}

// Collect is a RowSink gathering the answer into a Result.
type Collect struct{ Result Result }

func (c *Collect) Columns(names []string) error {
	c.Result.Columns = append([]string(nil), names...)
	c.Result.Rows = [][]string{}
	return nil
}

func (c *Collect) Row(cells []string) error {
	c.Result.Rows = append(c.Result.Rows, append([]string(nil), cells...))
	return nil
}

// Collected is a backend's Query as its QueryRows into a Collect.
func Collected(ctx context.Context, query string,
	queryRows func(context.Context, string, RowSink) error) (Result, error) {
	var c Collect
	if err := queryRows(ctx, query, &c); err != nil {
		return Result{}, err
	}
	return c.Result, nil
}
