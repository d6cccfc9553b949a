package dashboard

import (
	"bytes"
	"embed"
	"encoding/json"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/alpinashop/alpipe/internal/warehouse"
)

// Paths the handler answers. Everything else is a 404: mounted at "/" the
// handler is the catch-all, and must not answer for a mistyped function.
const (
	PagePath = "/"
	APIPath  = "/api/dashboard"
	JSPath   = "/assets/dashboard.js"
	CSSPath  = "/assets/dashboard.css"
)

//go:embed assets
var assets embed.FS

var page = template.Must(template.ParseFS(assets, "assets/index.html"))

// contentSecurity allows only the handler's own script, styles and fetches:
// the page needs nothing else, so an injected script or style cannot run.
const contentSecurity = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// Handler serves the page, its assets and its snapshot. Mount it at the
// server's root: the page fetches "api/dashboard" relative to itself.
func Handler(src Source) http.Handler {
	src = src.withDefaults()
	var index bytes.Buffer
	err := page.Execute(&index, struct {
		Aggregation   string
		Aggregations  []string
		RefreshMillis int64
	}{src.Aggregation, src.Aggregations, src.Refresh.Milliseconds()})
	if err != nil {
		panic(err) // a build defect: the template and its data are fixed
	}
	html := index.Bytes()

	mux := http.NewServeMux()
	mux.HandleFunc("GET "+PagePath+"{$}", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Security-Policy", contentSecurity)
		w.Header().Set("Cache-Control", "no-cache")
		_, _ = w.Write(html)
	})
	mux.HandleFunc("GET "+JSPath, asset("assets/dashboard.js", "text/javascript; charset=utf-8"))
	mux.HandleFunc("GET "+CSSPath, asset("assets/dashboard.css", "text/css; charset=utf-8"))
	mux.HandleFunc("GET "+APIPath, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		chosen, f, err := parseRequest(src, r.URL.Query())
		if err != nil {
			// JSON, so that the page can name the control at fault and show
			// the refusal instead of figures it did not filter.
			fe, ok := err.(*FilterError)
			if !ok {
				fe = &FilterError{Msg: err.Error()}
			}
			w.WriteHeader(http.StatusBadRequest)
			_ = json.NewEncoder(w).Encode(fe)
			return
		}
		_ = json.NewEncoder(w).Encode(TakeFiltered(r.Context(), chosen, f))
	})
	return mux
}

func asset(name, contentType string) http.HandlerFunc {
	b, err := assets.ReadFile(name)
	if err != nil {
		panic(err) // embedded at build time
	}
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", contentType)
		w.Header().Set("Cache-Control", "no-cache")
		_, _ = w.Write(b)
	}
}

// parseRequest reads ?aggregation= and the filter, checked against that
// aggregation's key. An error is a *FilterError.
func parseRequest(src Source, q url.Values) (Source, Filter, error) {
	f, err := ParseFilter(q)
	if err != nil {
		return src, Filter{}, err
	}
	if name := strings.TrimSpace(q.Get("aggregation")); name != "" {
		// Only a declared name reaches a read.
		if !slices.Contains(src.Aggregations, name) {
			return src, Filter{}, filterErr("aggregation", "%.128q is not a declared aggregation (want one of %s)", name, strings.Join(src.Aggregations, ", "))
		}
		src.Aggregation = name
	}
	if key, ok := warehouse.ViewKey(src.Aggregation); ok {
		if _, err := f.keysFor(src.Aggregation, key); err != nil {
			return src, Filter{}, err
		}
	}
	return src, f, nil
}
