package ingest_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/ingest"
	"github.com/alpinashop/alpipe/internal/ingest/ingesttest"
	"github.com/alpinashop/alpipe/internal/ledger"
	"github.com/alpinashop/alpipe/internal/logging"
	"github.com/alpinashop/alpipe/internal/objects"
)

// openOnly is an Objects that cannot describe a generation, so the
// service must hash it.
type openOnly struct{ ingest.Objects }

// composite describes generations as Cloud Storage describes a composite
// object: with a CRC32C and no MD5.
type composite struct {
	openOnly
	gcs *objects.GCS
}

func (c composite) Describe(ctx context.Context, bucket, name string, gen int64) (objects.Attrs, error) {
	a, err := c.gcs.Describe(ctx, bucket, name, gen)
	a.MD5 = ""
	return a, err
}

// TestEventWithoutMD5StillDeduplicates: without md5Hash, a copy under
// another name is still a DUPLICATE, while different content loads.
func TestEventWithoutMD5StillDeduplicates(t *testing.T) {
	tests := []struct {
		name    string
		objects func(*objects.GCS) ingest.Objects
		// firstMD5: the original's event carries md5Hash, so the copy's
		// MD5, found another way, must equal Cloud Storage's.
		firstMD5 bool
	}{
		{name: "from metadata", objects: func(g *objects.GCS) ingest.Objects { return g }},
		{name: "from metadata, original with md5Hash", objects: func(g *objects.GCS) ingest.Objects { return g }, firstMD5: true},
		{name: "computed for a composite object", objects: func(g *objects.GCS) ingest.Objects { return composite{openOnly{g}, g} }},
		{name: "computed, original with md5Hash", objects: func(g *objects.GCS) ingest.Objects { return composite{openOnly{g}, g} }, firstMD5: true},
		{name: "computed without a describer", objects: func(g *objects.GCS) ingest.Objects { return openOnly{g} }},
	}
	content := readSeed(t, seedOrders)
	other := strings.Replace(content, "PED-2026-0314-0001", "PED-2026-0314-0009", 1)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := ingesttest.NewParts(t, landing, quarantine)
			cfg := ingest.Config{QuarantineBucket: quarantine, QuarantinePrefix: "cuarentena/"}
			svc, err := ingest.New(tt.objects(p.GCS), p.Ledger, p.Warehouse, p.Feeds, cfg, ingesttest.NewClock(testStart).Now, logging.Discard())
			if err != nil {
				t.Fatal(err)
			}
			deliver := func(name, body string, withMD5 bool) ledger.Record {
				t.Helper()
				a := ingesttest.Put(t, p.GCS, landing, name, body, nil)
				obj := ingest.Object{Bucket: landing, Name: name, Generation: a.Generation, Size: a.Size}
				if withMD5 {
					obj.MD5 = a.MD5
				}
				rec, err := svc.Ingest(t.Context(), obj)
				if err != nil {
					t.Fatalf("ingest %s: %v", name, err)
				}
				if want := a.MD5; rec.MD5 != want {
					t.Errorf("%s: ledger MD5 %q, want Cloud Storage's %q", name, rec.MD5, want)
				}
				return rec
			}
			orig := deliver(seedOrders, content, tt.firstMD5)
			cp := deliver("exportaciones/2026/03/14/copia.csv", content, false)
			diff := deliver("exportaciones/2026/03/14/otro.csv", other, false)
			got := []any{orig.State, cp.State, cp.DuplicateOf, diff.State,
				ingesttest.Query(t, p.Warehouse, "SELECT COUNT(*) FROM lineas_pedido")[0][0]}
			want := []any{ledger.Done, ledger.Duplicate, &orig.Key, ledger.Done, "2"}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("original, copy, duplicate of, different content, rows loaded (-want +got):\n%s", d)
			}
		})
	}
}
