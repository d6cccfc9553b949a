package local

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strconv"
	"time"

	"github.com/alpinashop/alpipe/internal/config"
	"github.com/alpinashop/alpipe/internal/contract"
	"github.com/alpinashop/alpipe/internal/ledger"
	"github.com/alpinashop/alpipe/internal/replay"
	"github.com/alpinashop/alpipe/internal/status"
	"github.com/alpinashop/alpipe/internal/warehouse/remote"
)

// AdminPrefix is where the local-only endpoints live. They exist because the
// embedded engines are single-process: a second process cannot open the
// DuckDB or state files while serve holds them, so client commands ask the
// server instead.
const AdminPrefix = "/_local/"

// maxAdminBody bounds the body of an admin request that is decoded whole:
// a query's SQL is a few KB, and a 50 MB body cost the server over a GB of
// allocations (the JSON decoder's buffer, the string, DuckDB's parse and
// the echo in its answer).
const maxAdminBody = 1 << 20

func (s *Server) admin() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+AdminPrefix+"health", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("ok\n"))
	})
	qh := s.queryHandler()
	mux.Handle("POST "+AdminPrefix+"query", qh)
	mux.HandleFunc("GET "+AdminPrefix+"ledger", s.handleLedger)
	mux.HandleFunc("POST "+AdminPrefix+"clock", s.handleClock)
	mux.HandleFunc("GET "+AdminPrefix+"stats", s.handleStats)
	mux.Handle("GET "+AdminPrefix+"status", status.Handler(s.App.StatusSources()))
	if wh, ok := s.App.Querier().(remote.Backend); ok {
		// Lets a cgo-free cmd/server (WAREHOUSE=remote) write to this
		// server's DuckDB, which no second process may open. Local only.
		mux.Handle(AdminPrefix+"warehouse/", http.StripPrefix(AdminPrefix+"warehouse", remote.Handler(boundedWarehouse{Warehouse: wh, caps: qh.caps, capsErr: qh.capsErr})))
	}
	if h := s.replayHandler(); h != nil {
		mux.Handle("POST "+AdminPrefix+"replay", h)
	}
	return boundBodies(mux)
}

// boundBodies caps the request body at maxAdminBody except on the routes
// that stream theirs: a warehouse load, an append (remote.Handler caps it
// at its own size) and a replay's JSONL. The warehouse's query and refresh
// carry SQL or dates, as small as the query endpoint's.
func boundBodies(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case AdminPrefix + "warehouse/load", AdminPrefix + "warehouse/append", AdminPrefix + "replay":
		default:
			r.Body = http.MaxBytesReader(w, r.Body, maxAdminBody)
		}
		next.ServeHTTP(w, r)
	})
}

// replayHandler runs replays inside the server, which holds the warehouse.
func (s *Server) replayHandler() http.Handler {
	proc, err := s.App.StreamProcessor()
	if err != nil {
		return nil
	}
	wh, ok := s.App.Querier().(replay.Warehouse)
	if !ok {
		return nil
	}
	return replay.NewHandler(wh, replay.Options{
		Specs:     proc.Specs(),
		IsCountry: contract.IsCountry,
		TempDir:   filepath.Join(s.data, "tmp"),
		Now:       s.Clock.Now,
		Log:       s.App.Logger(),
	})
}

// queryHandler bounds /_local/query (and the warehouse route's queries) by
// config.Query. The caps are read
// where the functions read theirs; if they are invalid the server still
// starts (the functions need none of them) but refuses every query with
// the reason, rather than answer without bounds.
func (s *Server) queryHandler() *queryHandler {
	h := &queryHandler{querier: s.App.Querier, log: s.App.Logger()}
	if err := config.Load(context.Background(), &h.caps, s.App.Lookup()); err != nil {
		h.capsErr = err
		h.log.Error("local queries are refused until the configuration is fixed", "error", err)
	}
	return h
}

func (s *Server) handleLedger(w http.ResponseWriter, r *http.Request) {
	l := s.App.Ledger()
	if l == nil {
		httpError(w, http.StatusServiceUnavailable, errors.New("no ledger is open"))
		return
	}
	q := r.URL.Query()
	if q.Get("object") == "" {
		recs, err := l.List(r.Context())
		if err != nil {
			httpError(w, http.StatusInternalServerError, err)
			return
		}
		writeJSON(w, recs)
		return
	}
	gen, err := strconv.ParseInt(q.Get("generation"), 10, 64)
	if err != nil {
		httpError(w, http.StatusBadRequest, fmt.Errorf("generation: %w", err))
		return
	}
	rec, ok, err := l.Get(r.Context(), ledger.Key{Bucket: q.Get("bucket"), Object: q.Get("object"), Generation: gen})
	switch {
	case err != nil:
		httpError(w, http.StatusInternalServerError, err)
	case !ok:
		httpError(w, http.StatusNotFound, errors.New("no ledger record for that generation"))
	default:
		writeJSON(w, rec)
	}
}

func (s *Server) handleClock(w http.ResponseWriter, r *http.Request) {
	if !s.Clock.Virtual() {
		httpError(w, http.StatusConflict, errors.New("this server runs on the wall clock; start it with serve --virtual-clock"))
		return
	}
	t, err := time.Parse(time.RFC3339Nano, r.URL.Query().Get("now"))
	if err != nil {
		httpError(w, http.StatusBadRequest, fmt.Errorf("now: %w", err))
		return
	}
	s.Clock.Set(t)
	writeJSON(w, map[string]string{"now": s.Clock.Now().Format(time.RFC3339Nano)})
}

func (s *Server) handleStats(w http.ResponseWriter, _ *http.Request) {
	svc, err := s.App.IngestService()
	if err != nil {
		httpError(w, http.StatusServiceUnavailable, err)
		return
	}
	writeJSON(w, svc.Stats().Snapshot())
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

func httpError(w http.ResponseWriter, code int, err error) {
	http.Error(w, err.Error(), code)
}
