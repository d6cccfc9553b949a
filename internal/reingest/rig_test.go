package reingest_test

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/alpinashop/alpipe/internal/contract"
	"github.com/alpinashop/alpipe/internal/docstore/boltstore"
	"github.com/alpinashop/alpipe/internal/ingest"
	"github.com/alpinashop/alpipe/internal/ingest/ingesttest"
	"github.com/alpinashop/alpipe/internal/ledger"
	"github.com/alpinashop/alpipe/internal/logging"
	"github.com/alpinashop/alpipe/internal/objects"
	"github.com/alpinashop/alpipe/internal/warehouse/duckdb"
)

const landing, quarantine = ingesttest.Landing, ingesttest.Quarantine

// rig is the ingest service on real parts (see ingesttest), on a settable
// clock.
type rig struct {
	t     *testing.T
	gcs   *objects.GCS
	store *boltstore.Store
	led   *ledger.Ledger
	wh    *duckdb.Warehouse
	feeds *contract.Registry
	svc   *ingest.Service
	clock *ingesttest.Clock
}

func newRig(t *testing.T) *rig {
	t.Helper()
	return rigOn(t, ingesttest.NewParts(t, landing, quarantine))
}

// newDiskRig is newRig with objects stored as files, as `alpipe serve`
// stores them: a name the file system cannot hold fails.
func newDiskRig(t *testing.T) *rig {
	t.Helper()
	return rigOn(t, ingesttest.NewDiskParts(t, landing, quarantine))
}

func rigOn(t *testing.T, p *ingesttest.Parts) *rig {
	t.Helper()
	r := &rig{t: t, gcs: p.GCS, store: p.Store, led: p.Ledger, wh: p.Warehouse, feeds: p.Feeds,
		clock: ingesttest.NewClock(time.Date(2026, 3, 15, 2, 0, 0, 0, time.UTC))}
	var err error
	r.svc, err = ingest.New(p.GCS, p.Ledger, p.Warehouse, p.Feeds,
		ingest.Config{QuarantineBucket: quarantine, QuarantinePrefix: "cuarentena/"},
		r.clock.Now, logging.Discard())
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func (r *rig) advance(d time.Duration) { r.clock.Advance(d) }

func (r *rig) put(bucket, name, content string, meta map[string]string) objects.Attrs {
	r.t.Helper()
	return ingesttest.Put(r.t, r.gcs, bucket, name, content, meta)
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
	return ingesttest.Query(r.t, r.wh, sql)
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
