package ops_test

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/storage"
	"google.golang.org/api/option"

	"github.com/alpinashop/alpipe/internal/contract"
	"github.com/alpinashop/alpipe/internal/docstore/boltstore"
	"github.com/alpinashop/alpipe/internal/ingest"
	"github.com/alpinashop/alpipe/internal/ledger"
	"github.com/alpinashop/alpipe/internal/logging"
	"github.com/alpinashop/alpipe/internal/objects"
	"github.com/alpinashop/alpipe/internal/warehouse/duckdb"
)

const (
	landing    = "alpinashop-catalogo"
	quarantine = "alpinashop-cuarentena"
)

// rig is the ingest service on real parts: the in-process fake GCS, the
// embedded state store and an in-memory DuckDB, on a settable clock.
type rig struct {
	t     *testing.T
	gcs   *objects.GCS
	store *boltstore.Store
	led   *ledger.Ledger
	wh    *duckdb.Warehouse
	feeds *contract.Registry
	svc   *ingest.Service

	mu  sync.Mutex
	now time.Time
}

func newRig(t *testing.T) *rig {
	t.Helper()
	ctx := context.Background()
	fake, err := objects.StartLocal("", landing, quarantine)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fake.Close)
	// A transport of the test's own, so that cleanup can close the
	// connections a cancelled upload dialled but never used: the fake's
	// shutdown would otherwise wait 5 s for them.
	transport := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(transport.CloseIdleConnections)
	client, err := storage.NewClient(ctx,
		option.WithEndpoint(fake.URL()+"/storage/v1/"),
		option.WithHTTPClient(&http.Client{Transport: transport}),
		storage.WithJSONReads())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	gcs, err := objects.NewGCS(client)
	if err != nil {
		t.Fatal(err)
	}
	store, err := boltstore.Open(filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	led, err := ledger.New(store, ledger.Options{Lease: 10 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	wh, err := duckdb.Open("", duckdb.Options{TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { wh.Close() })
	feeds, err := contract.Default()
	if err != nil {
		t.Fatal(err)
	}
	r := &rig{t: t, gcs: gcs, store: store, led: led, wh: wh, feeds: feeds, now: time.Date(2026, 3, 15, 2, 0, 0, 0, time.UTC)}
	r.svc, err = ingest.New(gcs, led, wh, feeds,
		ingest.Config{QuarantineBucket: quarantine, QuarantinePrefix: "cuarentena/"},
		r.clock, logging.Discard())
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func (r *rig) clock() time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.now
}

func (r *rig) advance(d time.Duration) {
	r.mu.Lock()
	r.now = r.now.Add(d)
	r.mu.Unlock()
}

func (r *rig) put(bucket, name, content string, meta map[string]string) objects.Attrs {
	r.t.Helper()
	w := r.gcs.Create(context.Background(), bucket, name, "text/csv", meta)
	if _, err := io.WriteString(w, content); err != nil {
		r.t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		r.t.Fatal(err)
	}
	return w.Attrs()
}

func (r *rig) read(bucket, name string) string {
	r.t.Helper()
	rc, err := r.gcs.Open(context.Background(), bucket, name, 0)
	if err != nil {
		r.t.Fatal(err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		r.t.Fatal(err)
	}
	return string(b)
}

func (r *rig) query(sql string) [][]string {
	r.t.Helper()
	res, err := r.wh.Query(context.Background(), sql)
	if err != nil {
		r.t.Fatalf("query %q: %v", sql, err)
	}
	return res.Rows
}

const header = "pedido_id,linea,fecha,sku,cantidad,precio_unitario,cliente_id,pais\n"

// orderFile is a lineas_pedido export of n rows for one day, unique to
// (day, tag); every tenth row has a negative quantity and every
// seventeenth an unknown country, so each file quarantines some rows.
func orderFile(day int, tag string, n int) (content string, loaded, bad int) {
	var b strings.Builder
	b.WriteString(header)
	for i := 1; i <= n; i++ {
		qty, country := "2", "ES"
		switch {
		case i%10 == 0:
			qty = "-1"
			bad++
		case i%17 == 0:
			country = "XX"
			bad++
		default:
			loaded++
		}
		fmt.Fprintf(&b, "PED-%s-%02d-%04d,1,2026-02-%02d,SKU-%d,%s,\"12,50\",CLI-%d,%s\n", tag, day, i, day, i%7, qty, i, country)
	}
	return b.String(), loaded, bad
}

// csvRows parses a CSV text.
func csvRows(t *testing.T, text string) [][]string {
	t.Helper()
	cr := csv.NewReader(strings.NewReader(text))
	cr.FieldsPerRecord = -1
	rows, err := cr.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return rows
}
