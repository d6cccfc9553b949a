package client

import (
	"bytes"
	"context"
	"encoding/json"

	"github.com/alpinashop/alpipe/internal/warehouse"
)

// QueryRequest is the body of POST /_local/query.
type QueryRequest struct {
	SQL string `json:"sql"`
}

// Query runs read-only SQL on the server's warehouse.
func (s Server) Query(ctx context.Context, sql string) (warehouse.Result, error) {
	body, err := json.Marshal(QueryRequest{SQL: sql})
	if err != nil {
		return warehouse.Result{}, err
	}
	var res warehouse.Result
	_, err = s.postJSON(ctx, AdminPrefix+"query", bytes.NewReader(body), &res)
	return res, err
}

// Querier reads the warehouse of a running server, for code written
// against warehouse.Querier (reconcile).
type Querier struct{ Server Server }

var _ warehouse.Querier = Querier{}

func (q Querier) Query(ctx context.Context, sql string) (warehouse.Result, error) {
	return q.Server.Query(ctx, sql)
}
