package dashboard_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/alpinashop/alpipe/internal/dashboard"
)

// TestPageOffersTheAggregations: the page's aggregation control lists the
// names the server passes, the default chosen, and only those.
func TestPageOffersTheAggregations(t *testing.T) {
	tests := []struct {
		name string
		src  dashboard.Source
		want string
	}{
		{
			name: "both declared aggregations, the default chosen",
			src:  dashboard.Source{Aggregations: []string{"ventas_hora_pais", "ventas_sku_hora_movil"}},
			want: `<select id="f-agg" name="aggregation" data-default="ventas_hora_pais">` +
				`<option value="ventas_hora_pais" selected>ventas_hora_pais</option>` +
				`<option value="ventas_sku_hora_movil">ventas_sku_hora_movil</option></select>`,
		},
		{
			name: "no list: the shown aggregation alone",
			src:  dashboard.Source{},
			want: `<select id="f-agg" name="aggregation" data-default="ventas_hora_pais">` +
				`<option value="ventas_hora_pais" selected>ventas_hora_pais</option></select>`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.src.Now = func() time.Time { return now }
			rec := httptest.NewRecorder()
			dashboard.Handler(tt.src).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, dashboard.PagePath, nil))
			if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), tt.want) {
				t.Errorf("HTTP %d; page lacks\n%s\nin\n%s", rec.Code, tt.want, rec.Body)
			}
		})
	}
}
