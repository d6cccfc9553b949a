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
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"

	"github.com/alpinashop/alpipe/functions"
	"github.com/alpinashop/alpipe/internal/client"
	"github.com/alpinashop/alpipe/internal/clock"
	"github.com/alpinashop/alpipe/internal/ledger"
	"github.com/alpinashop/alpipe/internal/localapi"
	"github.com/alpinashop/alpipe/internal/logging"
	"github.com/alpinashop/alpipe/internal/order"
	"github.com/alpinashop/alpipe/internal/replay/replaytest"
)

// One server, on a virtual clock, serves most tests of this package
// (starting one costs DuckDB and the embedded store a second each).
var srv *Server

func TestMain(m *testing.M) {
	flag.Parse()
	data, err := os.MkdirTemp("", "alpipe-local-test-")
	if err == nil {
		srv, err = Start(context.Background(), options(data, t0))
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "start local server:", err)
		os.Exit(1)
	}
	code := m.Run()
	_ = srv.Shutdown("tests done")
	os.RemoveAll(data)
	os.Exit(code)
}

// t0 is where every test server's virtual clock starts.
var t0 = time.Date(2026, 3, 14, 17, 0, 0, 0, time.UTC)

// options serve on a free port with a virtual clock at start.
func options(dir string, start time.Time) Options {
	return Options{Addr: "127.0.0.1:0", DataDir: dir, Clock: clock.Virtual(start), Logger: logging.Discard()}
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

// TestIngestCSVAnswers: an undecodable event is acknowledged (a retry
// cannot help); while another attempt holds the generation, IngestCSV
// answers 409 so that Eventarc redelivers later.
func TestIngestCSVAnswers(t *testing.T) {
	ctx := context.Background()
	bad := cloudevents.NewEvent()
	bad.SetID("bad-1")
	bad.SetType(functions.FinalizedType)
	bad.SetSource("//storage.googleapis.com/projects/_/buckets/x")
	if err := bad.SetData(cloudevents.ApplicationJSON, map[string]string{"bucket": "x"}); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "f.csv")
	const content = "pedido_id,linea,fecha,sku,cantidad,precio_unitario,cliente_id,pais\r\n" +
		"P-BUSY,1,2026-03-21,MOCH-40L-AZ,1,\"89,90\",C-1,ES\r\n"
	if err := os.WriteFile(file, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	const object = "exportaciones/2026/03/21/busy.csv"
	attrs, err := client.Server{URL: srv.URL}.Upload(ctx, localapi.LandingBucket, object, file)
	if err != nil {
		t.Fatal(err)
	}
	busy, err := client.FinalizeEvent(attrs, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	key := ledger.Key{Bucket: attrs.Bucket, Object: attrs.Name, Generation: attrs.Generation}
	if _, err := srv.App.Ledger.Claim(ctx, key, attrs.MD5, "another-instance", srv.Clock.Now()); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		e    cloudevents.Event
		want int
	}{
		{name: "undecodable event", e: bad, want: http.StatusOK},
		{name: "leased by another attempt", e: busy, want: http.StatusConflict},
	} {
		status, err := client.Deliver(ctx, srv.URL+"/"+functions.IngestCSVName, tt.e)
		if status != tt.want || (err == nil) != (status/100 == 2) {
			t.Errorf("%s: HTTP %d, %v; want %d", tt.name, status, err, tt.want)
		}
	}
}

// TestDashboardRefresh: serve's page, over a warehouse that bills nothing
// per query, refreshes every 5 s (dashboard.DefaultRefresh is BigQuery's).
func TestDashboardRefresh(t *testing.T) {
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

var benchSeq atomic.Int64

// BenchmarkPushOrders measures sustained orders per second through the
// local server's push endpoint: HTTP, the functions framework, decoding,
// validation, the embedded state store's transactions (fsynced, group
// committed) — everything but Pub/Sub itself. Run with
//
//	go test -run XXX -bench PushOrders -benchtime 20000x ./internal/local/
func BenchmarkPushOrders(b *testing.B) {
	countries := []string{"ES", "FR", "PT", "DE", "IT", "NL", "BE", "AT", "IE", "LU", "PL", "CZ", "SK", "HU", "SI",
		"HR", "RO", "BG", "GR", "CY", "MT", "DK", "SE", "FI", "EE", "LV", "LT", "CH", "NO", "GB"}
	for _, bc := range []struct {
		name string
		keys []string
	}{{"uniform_30_countries", countries}, {"hot_key", []string{"ES"}}} {
		b.Run(bc.name, func(b *testing.B) {
			// Event times an hour ahead of the clock: every order is on time
			// and lands in the same few windows, as in a busy hour.
			event := srv.Clock.Now().Add(time.Hour).Format(time.RFC3339)
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256}}
			b.SetParallelism(32)
			b.ResetTimer()
			start := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					n := benchSeq.Add(1)
					key := bc.keys[int(n)%len(bc.keys)]
					order := fmt.Sprintf(`{"pedido_id":"B-%d","pais":"%s","importe_total":"89.90","lineas":[{"sku":"MOCH-40L-AZ","cantidad":1,"precio_unitario":"89.90"}]}`, n, key)
					body := `{"message":{"data":"` + base64.StdEncoding.EncodeToString([]byte(order)) +
						`","attributes":{"momento_evento":"` + event + `"},"messageId":"bm-` + strconv.FormatInt(n, 10) +
						`","publishTime":"2026-03-14T17:00:00Z"},"subscription":"projects/p/subscriptions/s"}`
					resp, err := client.Post(srv.URL+"/"+functions.AggregateOrdersName, "application/json", bytes.NewBufferString(body))
					if err != nil {
						b.Fatal(err)
					}
					_, _ = io.Copy(io.Discard, resp.Body) // so the connection is reused
					resp.Body.Close()
					if resp.StatusCode != http.StatusOK {
						b.Fatalf("HTTP %d", resp.StatusCode)
					}
				}
			})
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "orders/s")
		})
	}
}
