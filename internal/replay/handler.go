package replay

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
)

// The source query parameter of the replay endpoint.
const (
	SourceJSONL = "jsonl"                // the request body is an orders JSONL (the default)
	SourceTable = "lineas_pedido"        // replay lineas_pedido; no body
	ContentType = "application/x-ndjson" // of a JSONL request body
)

// Handler serves a replay for the local server, which holds the warehouse
// file a CLI process cannot open: POST ?dates=A..B[&source=S]. It answers
// the Report as JSON (also when windows were refused: Report.OK says so),
// 400 for a bad request or input, 409 while another replay runs, 500 when a
// replay failed (the body says what was done).
type Handler struct {
	wh   Warehouse
	opts Options
	busy sync.Mutex
}

// NewHandler serves Run with opts but for Dates, which each request sets.
func NewHandler(wh Warehouse, opts Options) *Handler {
	return &Handler{wh: wh, opts: opts}
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "use POST", http.StatusMethodNotAllowed)
		return
	}
	q := r.URL.Query()
	dates, err := ParseDates(q.Get("dates"))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var src Source
	name := ""
	switch q.Get("source") {
	case "", SourceJSONL:
		src, name = NewJSONL(r.Body), "orders JSONL"
	case SourceTable:
		src, name = NewTable(h.wh, dates), SourceTable
	default:
		http.Error(w, fmt.Sprintf("source %q: want %s or %s", q.Get("source"), SourceJSONL, SourceTable), http.StatusBadRequest)
		return
	}
	if !h.busy.TryLock() {
		http.Error(w, "another replay is running", http.StatusConflict)
		return
	}
	defer h.busy.Unlock()
	opts := h.opts
	opts.Dates = dates
	rep, err := Run(r.Context(), h.wh, src, name, opts)
	if err != nil {
		code := http.StatusInternalServerError
		var ie *InputError
		if errors.As(err, &ie) {
			code = http.StatusBadRequest
		}
		b, _ := json.Marshal(rep)
		http.Error(w, fmt.Sprintf("%v\nreport so far: %s", err, b), code)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(rep)
}
