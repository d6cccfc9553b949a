package ingest_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/ingest"
	"github.com/alpinashop/alpipe/internal/ingest/ingesttest"
	"github.com/alpinashop/alpipe/internal/ledger"
	"github.com/alpinashop/alpipe/internal/logging"
)

// TestOnlyLandingObjectsAreLoaded: an object outside the landing area is
// logged and refused with ErrNotLanding, and nothing is loaded or recorded.
func TestOnlyLandingObjectsAreLoaded(t *testing.T) {
	const header = "pedido_id,linea,fecha,sku,cantidad,precio_unitario,cliente_id,pais\r\n"
	const row = "PED-1,1,2026-03-14,MOCH-40L-AZ,2,\"89,90\",C-1,ES\r\n"
	tests := []struct {
		name      string
		bucket    string
		object    string
		landing   bool
		anyObject bool // no landing area configured
	}{
		{name: "landing object", bucket: landing, object: "exportaciones/2026/03/14/pedidos.csv", landing: true},
		{name: "quarantine bucket", bucket: quarantine, object: "cuarentena/lineas_pedido/exportaciones/2026/03/14/pedidos.csv"},
		{name: "quarantine bucket with a landing-like name", bucket: quarantine, object: "exportaciones/2026/03/14/pedidos.csv"},
		{name: "landing bucket outside the prefixes", bucket: landing, object: "tmp/exportaciones/2026/03/14/pedidos.csv"},
		{name: "prefix needs its slash", bucket: landing, object: "exportaciones-viejas/2026/03/14/pedidos.csv"},
		// Without a configured landing area the quarantine is still refused:
		// it is the one place whose files must never be loaded.
		{name: "quarantine without a landing area", bucket: quarantine,
			object: "cuarentena/lineas_pedido/x.csv", anyObject: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logs bytes.Buffer
			r := newRigWith(t, func(c *ingest.Config) {
				if !tt.anyObject {
					c.LandingBucket, c.LandingPrefixes = landing, []string{"exportaciones/"}
				}
			}, logging.New(&logs, slog.LevelInfo))
			a := ingesttest.Put(t, r.GCS, tt.bucket, tt.object, header+row, nil)
			obj := ingest.Object{Bucket: tt.bucket, Name: tt.object, Generation: a.Generation, MD5: a.MD5, Size: a.Size}
			rec, err := r.svc.Ingest(context.Background(), obj)
			_, recorded, gerr := r.Ledger.Get(context.Background(), obj.Key())
			if gerr != nil {
				t.Fatal(gerr)
			}
			var ignored []string
			for _, l := range logLines(t, logs.String(), "event ignored: not a landing object") {
				ignored = append(ignored, fmt.Sprint(l["bucket"], " ", l["name"]))
			}
			got := []any{err == nil, errors.Is(err, ingest.ErrNotLanding), rec.State, recorded,
				r.rows("lineas_pedido"), ignored}
			want := []any{false, true, ledger.State(""), false, "0", []string{tt.bucket + " " + tt.object}}
			if tt.landing {
				want = []any{true, false, ledger.Done, true, "1", []string(nil)}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("no error, ErrNotLanding, state, recorded, rows loaded, ignored-event log lines "+
					"(-want +got):\n%s", diff)
			}
		})
	}
}

func TestNewRefusesQuarantineInsideLanding(t *testing.T) {
	p := ingesttest.NewParts(t, landing)
	tests := []struct {
		name     string
		prefixes []string
		qprefix  string
		wantErr  bool
	}{
		{name: "separate prefixes of one bucket", prefixes: []string{"exportaciones/"}, qprefix: "cuarentena/"},
		{name: "quarantine under a landing prefix", prefixes: []string{"exportaciones/"}, qprefix: "exportaciones/cuarentena/", wantErr: true},
		{name: "whole bucket is landing", qprefix: "cuarentena/", wantErr: true},
		{name: "landing under the quarantine prefix", prefixes: []string{"cuarentena/exportaciones/"}, qprefix: "cuarentena/", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := ingest.Config{LandingBucket: landing, LandingPrefixes: tt.prefixes, QuarantineBucket: landing, QuarantinePrefix: tt.qprefix}
			_, err := ingest.New(p.GCS, p.Ledger, p.Warehouse, p.Feeds, cfg, ingesttest.NewClock(testStart).Now, logging.Discard())
			if (err != nil) != tt.wantErr {
				t.Errorf("New error = %v, wantErr %v", err, tt.wantErr)
			}
		})
	}
}
