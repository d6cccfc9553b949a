package ops

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/alpinashop/alpipe/internal/ledger"
	"github.com/alpinashop/alpipe/internal/setup"
	"github.com/alpinashop/alpipe/internal/stream"
	"github.com/alpinashop/alpipe/internal/warehouse"
)

// StatusPath is where the local server mounts StatusHandler.
const StatusPath = "/_local/status"

// StatusHandler answers GET with the status report: JSON by default,
// ?format=text for the text a person reads; ?since=12h (a Go duration)
// and ?files=N shape it. The local server mounts it at StatusPath, since
// only the process holding the embedded engines can read them.
func StatusHandler(src Sources) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "use GET", http.StatusMethodNotAllowed)
			return
		}
		opt, format, err := statusQuery(r)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		rep := BuildReport(r.Context(), src, opt)
		if format == "text" {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			_ = WriteStatus(w, rep)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		_ = enc.Encode(rep)
	})
}

func statusQuery(r *http.Request) (StatusOptions, string, error) {
	q := r.URL.Query()
	var opt StatusOptions
	if s := q.Get("since"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			return opt, "", fmt.Errorf("since=%q: want a positive duration such as 24h", s)
		}
		opt.Since = d
	}
	if s := q.Get("files"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			return opt, "", fmt.Errorf("files=%q: want a positive number", s)
		}
		opt.MaxFiles = n
	}
	format := q.Get("format")
	switch format {
	case "", "json":
		format = "json"
	case "text":
	default:
		return opt, "", fmt.Errorf("format=%q: want json or text", format)
	}
	return opt, format, nil
}

// AppSources reads a process's services as they are when each report is
// built, so a server may mount the handler before every function is ready.
func AppSources(app *setup.App) Sources {
	return Sources{Ledger: appLedger{app}, Warehouse: appQuerier{app}, Stream: appStream{app}, Now: app.Now}
}

type appLedger struct{ app *setup.App }

func (a appLedger) List(ctx context.Context) ([]ledger.Record, error) {
	l := a.app.Ledger()
	if l == nil {
		return nil, errors.New("IngestCSV is not configured in this process")
	}
	return l.List(ctx)
}

type appQuerier struct{ app *setup.App }

func (a appQuerier) Query(ctx context.Context, sql string) (warehouse.Result, error) {
	q := a.app.Querier()
	if q == nil {
		return warehouse.Result{}, errors.New("no warehouse is open in this process")
	}
	return q.Query(ctx, sql)
}

type appStream struct{ app *setup.App }

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

var (
	_ LedgerLister      = (*ledger.Ledger)(nil)
	_ StreamStatus      = (*stream.Processor)(nil)
	_ LedgerReader      = (*ledger.Ledger)(nil)
	_ warehouse.Querier = appQuerier{}
)
