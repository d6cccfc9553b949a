package local

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/functions"
	"github.com/alpinashop/alpipe/internal/client"
	"github.com/alpinashop/alpipe/internal/ledger"
	"github.com/alpinashop/alpipe/internal/localapi"
	"github.com/alpinashop/alpipe/internal/logging"
	"github.com/alpinashop/alpipe/internal/objects"
	"github.com/alpinashop/alpipe/internal/order"
	"github.com/alpinashop/alpipe/internal/replay/replaytest"
)

// One server, on a virtual clock, serves most tests of this package
// (starting one costs DuckDB and the embedded store a second each).
var srv *Server

func TestMain(m *testing.M) {
	flag.Parse()
	data, err := os.MkdirTemp("", "alpipe-local-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	clock := VirtualClock(time.Date(2026, 3, 14, 17, 0, 0, 0, time.UTC))
	srv, err = Start(context.Background(), Options{Addr: "127.0.0.1:0", DataDir: data, Clock: clock, Logger: logging.Discard()})
	if err != nil {
		fmt.Fprintln(os.Stderr, "start local server:", err)
		os.Exit(1)
	}
	code := m.Run()
	_ = srv.Shutdown("tests done")
	os.RemoveAll(data)
	os.Exit(code)
}

// TestDemo plays both demo stories through the functions framework and
// compares what a person sees with the golden file. Generations come from
// the fake GCS's clock, so they are masked.
func TestDemo(t *testing.T) {
	var out bytes.Buffer
	ctx := context.Background()
	if err := srv.DemoFiles(ctx, &out, "../../testdata"); err != nil {
		t.Fatal(err)
	}
	if err := srv.DemoOrders(ctx, &out, "../../testdata/pedidos/historia.jsonl"); err != nil {
		t.Fatal(err)
	}
	got := regexp.MustCompile(`(#|\.g|generation: )\d{6,}`).ReplaceAllString(out.String(), "${1}GEN")
	replaytest.Golden(t, "testdata/demo.golden", []byte(got))
	for _, must := range []string{
		"rows read/loaded/quarantined: 4/1/3", // the seed order file
		"expected 8 columns, got 9",
		"ON_TIME", "LATE", "too_late", "invalid: ",
	} {
		if !strings.Contains(got, must) {
			t.Errorf("demo output lacks %q", must)
		}
	}
}

// uploadOrders uploads an ERP export of rows to the landing bucket as
// object and returns its attributes and finalize event.
func uploadOrders(t *testing.T, object string, rows ...string) (objects.Attrs, cloudevents.Event) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "f.csv")
	content := "pedido_id,linea,fecha,sku,cantidad,precio_unitario,cliente_id,pais\r\n" + strings.Join(rows, "\r\n") + "\r\n"
	if err := os.WriteFile(file, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	attrs, err := client.Server{URL: srv.URL}.Upload(t.Context(), localapi.LandingBucket, object, file)
	if err != nil {
		t.Fatal(err)
	}
	e, err := client.FinalizeEvent(attrs, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return attrs, e
}

// TestIngestCSVThroughFramework sends the finalize event exactly as Eventarc
// does (binary CloudEvent via sdk-go) and redelivers it: one load.
func TestIngestCSVThroughFramework(t *testing.T) {
	ctx := context.Background()
	attrs, e := uploadOrders(t, "exportaciones/2026/03/20/framework.csv",
		`P-FW-1,1,2026-03-20,MOCH-40L-AZ,3,"89,90",C-1,ES`, `P-FW-2,1,2026-03-20,MOCH-40L-AZ,-1,"89,90",C-1,ES`)
	for i := range 2 {
		status, err := client.Deliver(ctx, srv.URL+"/"+functions.IngestCSVName, e)
		if err != nil || status/100 != 2 {
			t.Fatalf("delivery %d: HTTP %d, %v", i, status, err)
		}
	}
	rec, _, err := client.Server{URL: srv.URL}.Get(ctx, ledger.Key{Bucket: attrs.Bucket, Object: attrs.Name, Generation: attrs.Generation})
	if err != nil {
		t.Fatal(err)
	}
	got := []any{rec.State, rec.Attempt, rec.Counts.Read, rec.Counts.Loaded, rec.Counts.Quarantined}
	if diff := cmp.Diff([]any{ledger.Done, 1, int64(2), int64(1), int64(1)}, got); diff != "" {
		t.Errorf("state, attempt, read, loaded, quarantined (-want +got):\n%s", diff)
	}
	res, err := client.Server{URL: srv.URL}.Query(ctx, "SELECT COUNT(*) FROM lineas_pedido WHERE pedido_id = 'P-FW-1'")
	if err != nil {
		t.Fatal(err)
	}
	if res.Rows[0][0] != "1" {
		t.Errorf("P-FW-1 loaded %s times, want once", res.Rows[0][0])
	}
}

func TestIngestCSVBadEventIsAcknowledged(t *testing.T) {
	e := cloudevents.NewEvent()
	e.SetID("bad-1")
	e.SetType(functions.FinalizedType)
	e.SetSource("//storage.googleapis.com/projects/_/buckets/x")
	if err := e.SetData(cloudevents.ApplicationJSON, map[string]string{"bucket": "x"}); err != nil {
		t.Fatal(err)
	}
	status, err := client.Deliver(context.Background(), srv.URL+"/"+functions.IngestCSVName, e)
	if err != nil || status/100 != 2 {
		t.Errorf("undecodable event: HTTP %d, %v; want 2xx (a retry cannot help)", status, err)
	}
}

// TestAggregateOrdersFormats delivers the same kind of order as a wrapped
// push body and as an Eventarc binary CloudEvent.
func TestAggregateOrdersFormats(t *testing.T) {
	body := func(id, pedido string) []byte {
		data := base64.StdEncoding.EncodeToString([]byte(`{"pedido_id":"` + pedido + `","pais":"PT","importe_total":"10.00","lineas":[{"sku":"A","cantidad":1,"precio_unitario":"10.00"}]}`))
		return []byte(`{"message":{"data":"` + data + `","attributes":{"momento_evento":"2026-03-15T09:30:00Z"},"messageId":"` + id + `","publishTime":"2026-03-14T17:31:00Z"},"subscription":"projects/p/subscriptions/s","deliveryAttempt":1}`)
	}
	tests := []struct {
		name   string
		header http.Header
		body   []byte
		status int
		fate   string
	}{
		{name: "wrapped push", header: http.Header{"Content-Type": {"application/json"}}, body: body("fmt-1", "P-FMT-1"), status: 200, fate: "accepted"},
		{name: "eventarc binary CloudEvent", header: http.Header{"Content-Type": {"application/json"}, "Ce-Id": {"fmt-2"}, "Ce-Specversion": {"1.0"},
			"Ce-Type": {order.MessagePublishedType}, "Ce-Source": {"//pubsub.googleapis.com/projects/p/topics/pedidos-nuevos"}},
			body: body("fmt-2", "P-FMT-2"), status: 200, fate: "accepted"},
		{name: "same order again", header: http.Header{"Content-Type": {"application/json"}}, body: body("fmt-3", "P-FMT-1"), status: 200, fate: "duplicate"},
		{name: "not a push body: dead-lettered, acknowledged", header: http.Header{"Content-Type": {"application/json"}}, body: []byte(`{"pedido_id":"P-X"}`), status: 204},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodPost, srv.URL+"/"+functions.AggregateOrdersName, bytes.NewReader(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header = tt.header
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tt.status {
				t.Fatalf("HTTP %d, want %d: %s", resp.StatusCode, tt.status, b)
			}
			if tt.fate == "" {
				return
			}
			var res struct {
				Aggregations []struct{ Fate string }
			}
			if err := json.Unmarshal(b, &res); err != nil || len(res.Aggregations) == 0 {
				t.Fatalf("answer %s: %v", b, err)
			}
			// Every declared aggregation takes the order the same way.
			for i, a := range res.Aggregations {
				if a.Fate != tt.fate {
					t.Errorf("aggregation %d: fate = %s, want %s", i, a.Fate, tt.fate)
				}
			}
		})
	}
}

// TestIngestCSVBusyAsksForRedelivery: while another attempt holds the
// generation, IngestCSV answers 409 so that Eventarc redelivers later.
func TestIngestCSVBusyAsksForRedelivery(t *testing.T) {
	ctx := context.Background()
	attrs, e := uploadOrders(t, "exportaciones/2026/03/21/busy.csv", `P-BUSY,1,2026-03-21,MOCH-40L-AZ,1,"89,90",C-1,ES`)
	key := ledger.Key{Bucket: attrs.Bucket, Object: attrs.Name, Generation: attrs.Generation}
	if _, err := srv.App.Ledger.Claim(ctx, key, attrs.MD5, "another-instance", srv.Clock.Now()); err != nil {
		t.Fatal(err)
	}
	status, err := client.Deliver(ctx, srv.URL+"/"+functions.IngestCSVName, e)
	if status != http.StatusConflict || err == nil {
		t.Errorf("delivery while leased: HTTP %d, %v; want 409", status, err)
	}
}
