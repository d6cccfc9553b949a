package local

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/config"
)

// TestDashboardRefresh: the page over BigQuery refreshes every 5 minutes
// (each refresh is two billed queries), over a warehouse that bills
// nothing every 5 s, as the page serve mounts over its embedded one says.
func TestDashboardRefresh(t *testing.T) {
	got := []time.Duration{dashboardRefresh(config.DuckDB), dashboardRefresh(config.BigQuery)}
	if diff := cmp.Diff([]time.Duration{5 * time.Second, 5 * time.Minute}, got); diff != "" {
		t.Errorf("refresh over DuckDB, BigQuery (-want +got):\n%s", diff)
	}
	resp, err := http.Get(srv.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `data-refresh-ms="5000"`) {
		t.Errorf("GET /: HTTP %d, want 200 and the page with data-refresh-ms=\"5000\":\n%.400s", resp.StatusCode, body)
	}
}
