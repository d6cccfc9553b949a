package setup

import (
	"context"
	"errors"
	"time"

	"github.com/alpinashop/alpipe/internal/ledger"
	"github.com/alpinashop/alpipe/internal/status"
	"github.com/alpinashop/alpipe/internal/stream"
	"github.com/alpinashop/alpipe/internal/warehouse"
)

// StatusSources reads a process's services as they are when each report is
// built, so a server may mount the handler before every function is ready.
func (app *App) StatusSources() status.Sources {
	return status.Sources{Ledger: appLedger{app}, Warehouse: appQuerier{app}, Stream: appStream{app}, Now: app.Now}
}

type appLedger struct{ app *App }

func (a appLedger) List(ctx context.Context) ([]ledger.Record, error) {
	l := a.app.Ledger()
	if l == nil {
		return nil, errors.New("IngestCSV is not configured in this process")
	}
	return l.List(ctx)
}

type appQuerier struct{ app *App }

func (a appQuerier) Query(ctx context.Context, sql string) (warehouse.Result, error) {
	q := a.app.Querier()
	if q == nil {
		return warehouse.Result{}, errors.New("no warehouse is open in this process")
	}
	return q.Query(ctx, sql)
}

type appStream struct{ app *App }

func (a appStream) Status(ctx context.Context, now time.Time) ([]stream.AggregationStatus, error) {
	p, err := a.app.StreamProcessor()
	if err != nil {
		return nil, err
	}
	return p.Status(ctx, now)
}

func (a appStream) DeadLettersPending(ctx context.Context) (int, error) {
	p, err := a.app.StreamProcessor()
	if err != nil {
		return 0, err
	}
	return p.DeadLettersPending(ctx)
}

var _ warehouse.Querier = appQuerier{}
