package status

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// Handler answers GET with the report: JSON, or ?format=text; ?since=12h
// and ?files=N shape it.
func Handler(src Sources) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "use GET", http.StatusMethodNotAllowed)
			return
		}
		opt, format, err := parseQuery(r)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		rep := BuildReport(r.Context(), src, opt)
		if format == "text" {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			_ = WriteText(w, rep)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		_ = enc.Encode(rep)
	})
}

func parseQuery(r *http.Request) (Options, string, error) {
	q := r.URL.Query()
	var opt Options
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
	format := cmp.Or(q.Get("format"), "json")
	if format != "json" && format != "text" {
		return opt, "", fmt.Errorf("format=%q: want json or text", format)
	}
	return opt, format, nil
}
