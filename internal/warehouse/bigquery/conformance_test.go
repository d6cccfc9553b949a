package bigquery

import (
	"bytes"
	"context"
	"crypto/rand"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	neturl "net/url"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/warehouse"
	"github.com/alpinashop/alpipe/internal/warehouse/bigquery/bqfake"
	"github.com/alpinashop/alpipe/internal/warehouse/warehousetest"
	"github.com/alpinashop/alpipe/test/bqemulator"
)

// TestConformance runs the port's suite against the adapter over bqfake in
// front of the BigQuery emulator, a fresh fake per test, the views from
// Terraform's own files: every answer is GoogleSQL's.
func TestConformance(t *testing.T) {
	warehousetest.RunWith(t, func(t *testing.T) warehousetest.Warehouse {
		return newSQLTestEnv(t, warehouse.Accumulating, nil).w
	}, warehousetest.Features{})
}

// TestReadsDiscarding runs the named reads over DISCARDING views.
func TestReadsDiscarding(t *testing.T) {
	warehousetest.RunModeWith(t, func(t *testing.T) warehousetest.Warehouse {
		return newSQLTestEnv(t, warehouse.Discarding, nil).w
	}, warehousetest.Features{Accumulation: warehouse.Discarding, WindowSumDefect: defectWindowSum})
}

// TestConformanceSharedDataset runs the suite twice through one fake, as
// the live run does in its scratch dataset: each test must hold whatever
// the tests before wrote. Between tests the fake moves to a fresh emulator
// once restartAfter statements ran.
func TestConformanceSharedDataset(t *testing.T) {
	e := newSQLTestEnv(t, warehouse.Accumulating, nil)
	var em *bqemulator.Emulator
	t.Cleanup(func() {
		if em != nil {
			em.Stop()
		}
	})
	fresh := func(t *testing.T) warehousetest.Warehouse {
		if e.fake.Statements() < restartAfter {
			return e.w
		}
		next, err := emulator(t).start()
		if err != nil {
			t.Fatalf("GoogleSQL engine: %v", err)
		}
		if err := e.fake.MoveSQL(next.URL); err != nil {
			next.Stop()
			t.Fatal(err)
		}
		if em != nil {
			em.Stop()
		}
		em = next
		return e.w
	}
	for _, run := range []string{"first", "again"} {
		t.Run(run, func(t *testing.T) { warehousetest.RunWith(t, fresh, warehousetest.Features{}) })
	}
}

// TestGoogleSQLParsesWhatTheAdapterSends: the emulator itself reads the
// adapter's load file and insertAll rows, so the conformance suite's
// answers prove that GoogleSQL accepts them.
func TestGoogleSQLParsesWhatTheAdapterSends(t *testing.T) {
	var mu sync.Mutex
	var sent []string // "path body" of each request to the emulator
	e := newSQLTestEnv(t, warehouse.Accumulating, func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(b))
			mu.Lock()
			sent = append(sent, r.URL.Path+" "+string(b))
			mu.Unlock()
			next.ServeHTTP(w, r)
		})
	})
	ctx := context.Background()
	tag := "wire" + strings.ToLower(rand.Text())
	rows := lineas(t, 2)
	for _, r := range rows {
		r[0] = warehouse.StringValue(tag)
	}
	if _, err := e.w.Load(ctx, warehouse.Load{ID: tag, Table: warehouse.LineasPedido, Rows: source(rows)}); err != nil {
		t.Fatal(err)
	}
	p := pane(t, tag, 0, "250.10")
	if err := e.w.Append(ctx, warehouse.VentasHoraPaisPaneles, []warehouse.Row{p}); err != nil {
		t.Fatal(err)
	}
	res, err := e.w.Query(ctx, "SELECT (SELECT COUNT(*) FROM lineas_pedido WHERE pedido_id = '"+tag+"'), "+
		"(SELECT SUM(importe) FROM ventas_hora_pais_paneles WHERE pais = '"+tag+"')")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([][]string{{"2", "250.1"}}, res.Rows); diff != "" {
		t.Errorf("the emulator's rows (-want +got):\n%s", diff)
	}
	var load, insert bool
	for _, s := range sent {
		load = load || (strings.HasSuffix(strings.Fields(s)[0], "/jobs") && strings.Contains(s, `"sourceUris":["gs://`+testBucket+"/"+testPrefix))
		insert = insert || (strings.HasSuffix(strings.Fields(s)[0], "/insertAll") && strings.Contains(s, `"insertId":"`+p.ID+`"`))
	}
	if !load || !insert {
		t.Errorf("the emulator got the adapter's load job: %t, its insertAll rows: %t; it got:\n%s", load, insert, strings.Join(sent, "\n"))
	}
}

// newSQLTestEnv is newTestEnv over a fake running SQL on the emulator,
// Terraform's views in mode, reaching the emulator through wrap when set.
// It skips or fails as emulator does.
func newSQLTestEnv(t *testing.T, mode string, wrap func(http.Handler) http.Handler) *testEnv {
	t.Helper()
	eng := emulator(t)
	url, track := eng.run(t, mode)
	if wrap != nil {
		target, err := neturl.Parse(url)
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(wrap(httputil.NewSingleHostReverseProxy(target)))
		t.Cleanup(srv.Close)
		url = srv.URL
	}
	e := newEnv(t, eng.staging, bqfake.Options{SQL: url, ViewSQL: func(v warehouse.View) (string, error) {
		return terraformView(mode, testProject, testDataset, v)
	}})
	e.fake.FailOnViolations(t)
	track(e.fake)
	return e
}
