package dashboard_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"testing"

	"github.com/alpinashop/alpipe/internal/dashboard"
)

// TestNoExternalResources: the page works on a laptop with no network and
// leaks nothing to a CDN. Every script, style, font or image reference in
// the served page and assets is relative to the handler, and no time is
// formatted in the browser's zone or 12-hour clock.
func TestNoExternalResources(t *testing.T) {
	h := dashboard.Handler(dashboard.Source{})
	external := regexp.MustCompile(`(?i)(src|href|action)\s*=\s*["']?(https?:)?//|url\(\s*["']?(https?:)?//|@import|fetch\(\s*["'](https?:)?//`)
	local := regexp.MustCompile(`toLocale(Time|Date)?String|getHours\(|getDate\(|getMonth\(|getMinutes\(`)
	for _, path := range []string{dashboard.PagePath, dashboard.JSPath, dashboard.CSSPath} {
		t.Run(path, func(t *testing.T) {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
			if rec.Code != http.StatusOK {
				t.Fatalf("GET %s: HTTP %d", path, rec.Code)
			}
			b, _ := io.ReadAll(rec.Body)
			if m := external.Find(b); m != nil {
				t.Errorf("%s references another host: %q", path, m)
			}
			if m := local.Find(b); m != nil {
				t.Errorf("%s formats a time in the browser's zone: %q (the page shows UTC only)", path, m)
			}
		})
	}
}
