package stack

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"cloud.google.com/go/bigquery"
	"google.golang.org/api/option"

	"github.com/alpinashop/alpipe/internal/dashboard"
	"github.com/alpinashop/alpipe/internal/docstore/firestore"
	"github.com/alpinashop/alpipe/internal/httpserve"
	"github.com/alpinashop/alpipe/internal/ledger"
	"github.com/alpinashop/alpipe/internal/render"
	"github.com/alpinashop/alpipe/internal/warehouse"
	bqwarehouse "github.com/alpinashop/alpipe/internal/warehouse/bigquery"
)

// An answer lists at most consoleMaxLimit rows, so that a large table
// cannot flood a terminal or the stack's memory.
const (
	consoleDefaultLimit = 100
	consoleMaxLimit     = 1000
)

// Console is what a person asks the running stack (scripts/stack.sh up).
// It serves loopback clients only.
//
//	GET  /                    the dashboard; its snapshot at /api/dashboard
//	GET  /tables              each table with its number of rows
//	GET  /tables/NAME?limit=N the first N rows (default 100, at most 1000), one JSON object a line
//	GET  /clock               the stack's processing time
//	POST /clock?to=RFC3339    moves it forward (a test clock only)
type Console struct {
	s         *Stack
	dashboard http.Handler
}

// NewConsole serves the console of s. The dashboard reads the stack as
// production's reads its services: the Monitor fed by the processes' log
// lines, Firestore, and the production BigQuery adapter sent to the stack's
// BigQuery; without Firestore or a BigQuery endpoint those parts stay empty
// with the page's note.
func NewConsole(s *Stack) (*Console, error) {
	src := dashboard.Source{Monitor: s.Monitor, Backlog: s, Now: s.Now, Refresh: dashboard.LocalRefresh,
		QuarantineBucket: s.Buckets["quarantine"], DownloadBase: s.StorageURL + "/"}
	if s.Firestore != nil {
		store, err := firestore.New(s.Firestore)
		if err != nil {
			return nil, fmt.Errorf("stack console: %w", err)
		}
		src.Watermarks = dashboard.StoreWatermarks{Store: store}
		if src.Ledger, err = ledger.New(store, ledger.Options{}); err != nil {
			return nil, fmt.Errorf("stack console: %w", err)
		}
	}
	if s.BigQueryURL != "" {
		w, err := s.reads()
		if err != nil {
			return nil, fmt.Errorf("stack console: %w", err)
		}
		src.Warehouse = w
	}
	return &Console{s: s, dashboard: dashboard.Handler(src)}, nil
}

// reads is the BigQuery adapter the services run, pointed where
// BIGQUERY_EMULATOR_HOST points theirs, in their location.
func (s *Stack) reads() (*bqwarehouse.Warehouse, error) {
	client, err := bigquery.NewClient(context.Background(), s.Project,
		option.WithEndpoint(s.BigQueryURL+"/bigquery/v2/"), option.WithoutAuthentication())
	if err != nil {
		return nil, fmt.Errorf("BigQuery client: %w", err)
	}
	var location string
	for _, svc := range s.Deployment.Services {
		if l := svc.Env["BIGQUERY_LOCATION"]; l != "" {
			location = l
		}
	}
	return bqwarehouse.New(client, nil, bqwarehouse.Options{Project: s.Project, Dataset: s.Dataset, Location: location})
}

func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if reason := (httpserve.Guard{}).Refuse(r); reason != "" {
		http.Error(w, "stack console: "+reason, http.StatusForbidden)
		return
	}
	switch r.URL.Path {
	case dashboard.PagePath, dashboard.APIPath, dashboard.JSPath, dashboard.CSSPath:
		c.dashboard.ServeHTTP(w, r)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	switch path := r.URL.Path; {
	case path == "/tables" || strings.HasPrefix(path, "/tables/"):
		if !allowMethod(w, r, http.MethodGet) {
			return
		}
		if name := strings.TrimPrefix(path, "/tables/"); name != path && name != "" {
			c.rows(w, r, name)
		} else {
			c.tables(w)
		}
	case path == "/clock":
		c.clock(w, r)
	default:
		http.Error(w, fmt.Sprintf("no %s here: GET / is the dashboard, GET /tables lists the BigQuery fake's tables, GET /clock the clock", path), http.StatusNotFound)
	}
}

func allowMethod(w http.ResponseWriter, r *http.Request, methods ...string) bool {
	if slices.Contains(methods, r.Method) {
		return true
	}
	w.Header().Set("Allow", strings.Join(methods, ", "))
	http.Error(w, fmt.Sprintf("%s %s: use %s", r.Method, r.URL.Path, strings.Join(methods, " or ")), http.StatusMethodNotAllowed)
	return false
}

func (c *Console) tables(w http.ResponseWriter) {
	for _, t := range warehouse.Tables() {
		n := len(c.s.BigQuery.Rows(t.Name))
		fmt.Fprintf(w, "%-28s %s\n", t.Name, render.Counted(n, "row", "rows"))
	}
}

func (c *Console) rows(w http.ResponseWriter, r *http.Request, name string) {
	t, err := warehouse.Lookup(name)
	if err != nil {
		var names []string
		for _, t := range warehouse.Tables() {
			names = append(names, t.Name)
		}
		http.Error(w, fmt.Sprintf("no table %q: the tables are %s", name, strings.Join(names, ", ")), http.StatusNotFound)
		return
	}
	limit := consoleDefaultLimit
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > consoleMaxLimit {
			http.Error(w, fmt.Sprintf("limit=%q: want a number from 1 to %d", v, consoleMaxLimit), http.StatusBadRequest)
			return
		}
		limit = n
	}
	rows := c.s.BigQuery.Rows(t.Name)
	w.Header().Set("Content-Type", "application/x-ndjson")
	for _, row := range rows[:min(limit, len(rows))] {
		b, err := rowJSON(t.Schema, row)
		if err != nil {
			fmt.Fprintf(w, "{\"error\":%q}\n", err.Error())
			return
		}
		_, _ = w.Write(append(b, '\n'))
	}
	if len(rows) > limit {
		// A trailer a reader can tell from a row: rows have the table's columns.
		fmt.Fprintf(w, "{\"more_rows\":%d,\"hint\":\"?limit=%d shows up to %d\"}\n", len(rows)-limit, consoleMaxLimit, consoleMaxLimit)
	}
}

// rowJSON writes a row's columns in the table's order; NUMERIC values are
// exact decimal strings, as BigQuery's REST API gives them.
func rowJSON(schema []warehouse.Field, row map[string]any) ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range schema {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(f.Name)
		b.Write(k)
		b.WriteByte(':')
		v := row[f.Name]
		if r, ok := v.(*big.Rat); ok {
			v = ratText(r)
		}
		enc, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", f.Name, err)
		}
		b.Write(enc)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// ratText is r as an exact decimal: NUMERIC holds at most 9 decimal places.
// An integer's FloatString ends ".000000000": trimming the zeros stops at
// the point, which then goes.
func ratText(r *big.Rat) string {
	return strings.TrimSuffix(strings.TrimRight(r.FloatString(9), "0"), ".")
}

func (c *Console) clock(w http.ResponseWriter, r *http.Request) {
	if !allowMethod(w, r, http.MethodGet, http.MethodPost) {
		return
	}
	if r.Method == http.MethodPost {
		v := r.URL.Query().Get("to")
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			http.Error(w, fmt.Sprintf("to=%q: want a time such as 2026-03-14T21:00:00Z", v), http.StatusBadRequest)
			return
		}
		if err := c.s.SetClock(t); err != nil {
			http.Error(w, "move the clock: "+err.Error(), http.StatusConflict)
			return
		}
	}
	fmt.Fprintf(w, "%s\n", c.s.Now().UTC().Format(time.RFC3339))
}
