package warehouse

import "context"

// RowSink receives a query's answer while it is read, so that an answer of
// millions of rows never has to fit in memory: Columns once, before any
// row, then Row per row. The cells slice is only valid during the call
// (backends reuse it). An error from either stops the query; QueryRows
// returns it (wrapped), so a sink can end an answer early with a sentinel
// of its own and recognise it with errors.Is.
type RowSink interface {
	Columns(names []string) error
	Row(cells []string) error
}

// RowStreamer runs a read-only query like Querier and hands its answer to a
// sink row by row. Values are rendered as Querier renders them. Cancelling
// ctx stops the query in the engine, not only the reading.
type RowStreamer interface {
	QueryRows(ctx context.Context, sql string, sink RowSink) error
}

// Collect gathers a streamed answer into a Result, for backends whose Query
// is QueryRows into memory (callers that want a bounded answer stream).
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

// Collected gathers the answer of queryRows(ctx, query) into a Result, for
// a backend whose Query is its QueryRows into memory.
func Collected(ctx context.Context, query string,
	queryRows func(context.Context, string, RowSink) error) (Result, error) {
	var c Collect
	if err := queryRows(ctx, query, &c); err != nil {
		return Result{}, err
	}
	return c.Result, nil
}
