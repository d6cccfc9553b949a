package local

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"

	"github.com/alpinashop/alpipe/internal/config"
	"github.com/alpinashop/alpipe/internal/contract"
	"github.com/alpinashop/alpipe/internal/localapi"
	"github.com/alpinashop/alpipe/internal/replay"
	"github.com/alpinashop/alpipe/internal/status"
)

// maxAdminBody bounds the body of an admin request that is decoded whole:
// a query's SQL is a few KB, and a 50 MB body cost the server over a GB of
// allocations (the JSON decoder's buffer, the string, DuckDB's parse and
// the echo in its answer).
const maxAdminBody = 1 << 20

func (s *Server) admin() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+localapi.HealthPath, func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.Handle("POST "+localapi.QueryPath, s.queryHandler())
	mux.HandleFunc("GET "+localapi.LedgerPath, s.handleLedger)
	mux.HandleFunc("POST "+localapi.ClockPath, s.handleClock)
	mux.HandleFunc("GET "+localapi.StatsPath, s.handleStats)
	mux.Handle("GET "+localapi.StatusPath, status.Handler(s.App.StatusSources()))
	if h := s.replayHandler(); h != nil {
		mux.Handle("POST "+localapi.ReplayPath, h)
	}
	return boundBodies(mux)
}

// boundBodies caps the request body at maxAdminBody except on the route
// that streams its own, a replay's JSONL.
func boundBodies(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != localapi.ReplayPath {
			r.Body = http.MaxBytesReader(w, r.Body, maxAdminBody)
		}
		next.ServeHTTP(w, r)
	})
}

// replayHandler runs replays inside the server, which holds the warehouse.
func (s *Server) replayHandler() http.Handler {
	proc := s.App.Stream
	if proc == nil {
		return nil
	}
	if s.App.Warehouse == nil {
		return nil
	}
	return replay.NewHandler(s.App.Warehouse, replay.Options{
		Specs:     proc.Specs(),
		IsCountry: contract.IsCountry,
		TempDir:   filepath.Join(s.data, "tmp"),
		Now:       s.Clock.Now,
		Log:       s.App.Log,
	})
}

// queryHandler bounds localapi.QueryPath by config.Query. The caps are read
// where the functions read theirs; if they are invalid the server still
// starts (the functions need none of them) but refuses every query with
// the reason, rather than answer without bounds.
func (s *Server) queryHandler() *queryHandler {
	h := &queryHandler{querier: s.App.Querier, log: s.App.Log}
	if err := config.Load(context.Background(), &h.caps, s.App.Lookup); err != nil {
		h.capsErr = err
		h.log.Error("local queries are refused until the configuration is fixed", "error", err)
	}
	return h
}

func (s *Server) handleLedger(w http.ResponseWriter, r *http.Request) {
	l := s.App.Ledger
	if l == nil {
		httpError(w, http.StatusServiceUnavailable, errors.New("no ledger is open"))
		return
	}
	key, one, err := localapi.LedgerKey(r.URL.Query())
	if err != nil {
		httpError(w, http.StatusBadRequest, err)
		return
	}
	if !one {
		recs, err := l.List(r.Context())
		if err != nil {
			httpError(w, http.StatusInternalServerError, err)
			return
		}
		writeJSON(w, recs)
		return
	}
	rec, ok, err := l.Get(r.Context(), key)
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
	t, err := localapi.ClockTime(r.URL.Query())
	if err != nil {
		httpError(w, http.StatusBadRequest, err)
		return
	}
	if err := s.Clock.Set(t); err != nil {
		httpError(w, http.StatusInternalServerError, fmt.Errorf("set the virtual clock: %w", err))
		return
	}
	writeJSON(w, localapi.ClockAnswer{Now: s.Clock.Now()})
}

func (s *Server) handleStats(w http.ResponseWriter, _ *http.Request) {
	svc := s.App.Ingest
	if svc == nil {
		httpError(w, http.StatusServiceUnavailable, errors.New("IngestCSV is not served by this process"))
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
