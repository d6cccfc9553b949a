package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/GoogleCloudPlatform/functions-framework-go/funcframework"
	"github.com/google/go-cmp/cmp"
	"github.com/sethvargo/go-envconfig"

	alpipe "github.com/alpinashop/alpipe"
	"github.com/alpinashop/alpipe/functions"
	"github.com/alpinashop/alpipe/internal/config"
	"github.com/alpinashop/alpipe/internal/ingest/ingesttest"
	"github.com/alpinashop/alpipe/internal/ledger"
	"github.com/alpinashop/alpipe/internal/logging"
	"github.com/alpinashop/alpipe/internal/objects"
	"github.com/alpinashop/alpipe/internal/objects/objectstest"
	"github.com/alpinashop/alpipe/internal/setup"
	"github.com/alpinashop/alpipe/internal/warehouse"
	"github.com/alpinashop/alpipe/internal/warehouse/duckdb"
)

// world is one deployment of every function over backends of its own: a
// fake Cloud Storage, the embedded state store and DuckDB, on the test's
// clock. (cmd/server links no DuckDB, but its tests may: what is compared
// here is the serving path, and production's stores need emulators.)
type world struct {
	name string
	opts setup.Options
	gcs  *objects.GCS
	proc *functions.Process // as the serving path built it
	url  string             // where each function is served, at /<Name>
	// volatile are this world's own values (object generations and
	// creation times) and what they read as in a comparison.
	volatile []string
}

func newWorld(t *testing.T, name string, now *time.Time) *world {
	t.Helper()
	fake, gcs := objectstest.Fake(t, "", ingesttest.Landing, ingesttest.Quarantine)
	client, err := fake.Client(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Close() })
	return &world{name: name, gcs: gcs, opts: setup.Options{
		Lookup: envconfig.MapLookuper(map[string]string{"ALPIPE_DATA_DIR": t.TempDir()}), Now: func() time.Time { return *now },
		Logger: logging.Discard(), Storage: client,
		EmbeddedWarehouse: func(_ context.Context, b config.Backends) (setup.Warehouse, error) {
			return duckdb.Open(filepath.Join(b.DataDir, "warehouse.duckdb"), duckdb.Options{TempDir: filepath.Join(b.DataDir, "tmp")})
		},
	}}
}

// startFramework serves the functions framework's registrations (package
// alpipe's init) as its own Start does, on a free loopback port, and
// returns its URL. The framework's server cannot be stopped: it serves
// until the test binary exits, so one test may start it.
func startFramework(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	ln.Close()
	errc := make(chan error, 1)
	go func() { errc <- funcframework.StartHostPort("127.0.0.1", port) }()
	url := "http://127.0.0.1:" + port
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		select {
		case err := <-errc:
			t.Fatalf("funcframework.StartHostPort: %v", err)
		default:
		}
		if c, err := net.Dial("tcp", "127.0.0.1:"+port); err == nil {
			c.Close()
			return url
		}
	}
	t.Fatal("the functions framework did not listen within 5 s")
	return ""
}

// answer is what a caller sees of a response.
type answer struct {
	Code              int
	ContentType, Body string
}

func (w *world) call(t *testing.T, name string, header http.Header, body string) answer {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, w.url+"/"+name, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = header.Clone()
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		t.Fatalf("%s: POST /%s: %v", w.name, name, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return answer{Code: resp.StatusCode, ContentType: resp.Header.Get("Content-Type"), Body: w.normal(strings.TrimSpace(string(b)))}
}

// normal replaces this world's own values in s by their names, and the
// values every process draws for itself: the stream processor's instance
// in its batch IDs and the hash of the object's generation in a load ID.
func (w *world) normal(s string) string {
	s = strings.NewReplacer(w.volatile...).Replace(s)
	s = batchID.ReplaceAllString(s, "${1}<instance>$2")
	return loadIDHash.ReplaceAllString(s, "${1}<hash>")
}

var (
	batchID    = regexp.MustCompile(`("Batch":\{"ID":")[0-9A-Za-z]+(-[0-9]+")`)
	loadIDHash = regexp.MustCompile(`(-g<[a-z]+ generation>-)[0-9a-f]{16}`)
)

// put stores a landing file and names its generation and creation time.
func (w *world) put(t *testing.T, label, name, content string) objects.Attrs {
	t.Helper()
	a := ingesttest.Put(t, w.gcs, ingesttest.Landing, name, content, nil)
	gen := strconv.FormatInt(a.Generation, 10)
	w.volatile = append(w.volatile, gen, "<"+label+" generation>")
	for _, layout := range []string{time.RFC3339Nano, time.RFC3339} {
		w.volatile = append(w.volatile, a.Created.UTC().Format(layout), "<"+label+" created>")
	}
	return a
}

// effects is what the requests left in the world's backends.
func (w *world) effects(t *testing.T, keys []ledger.Key) string {
	t.Helper()
	ctx := context.Background()
	var b strings.Builder
	for _, tb := range warehouse.Tables() {
		var rows []string
		for _, r := range ingesttest.Query(t, w.proc.App.Querier(), "SELECT * FROM "+tb.Name) {
			rows = append(rows, strings.Join(r, " | "))
		}
		slices.Sort(rows)
		if len(rows) > 0 {
			fmt.Fprintf(&b, "table %s:\n%s\n", tb.Name, strings.Join(rows, "\n"))
		}
	}
	for _, k := range keys {
		rec, ok, err := w.proc.App.Ledger.Get(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		rec.Owner = "<owner>"
		j, _ := json.MarshalIndent(rec, "", " ")
		fmt.Fprintf(&b, "ledger %s (recorded %v):\n%s\n", k.Object, ok, j)
	}
	for a, err := range w.gcs.List(ctx, ingesttest.Quarantine, "") {
		if err != nil {
			t.Fatal(err)
		}
		r, err := w.gcs.Open(ctx, ingesttest.Quarantine, a.Name, a.Generation)
		if err != nil {
			t.Fatal(err)
		}
		content, err := io.ReadAll(r)
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "object gs://%s/%s:\n%s\n", ingesttest.Quarantine, a.Name, content)
	}
	return w.normal(b.String())
}

// TestFrameworkServesWhatServerServes: every function, registered with the
// functions framework (package alpipe at the module root, as Cloud Run
// functions builds it) and served by funcframework, answers the same
// requests as cmd/server's mux does, and leaves the same rows, ledger
// records and quarantine files: one definition of each function, two ways
// to serve it.
func TestFrameworkServesWhatServerServes(t *testing.T) {
	// Both paths serve every function, each at /<Name>.
	t.Setenv("FUNCTION_TARGET", "")
	t.Setenv("CLOUD_RUN_TIMEOUT_SECONDS", "")
	ctx := context.Background()
	// Two seconds behind the wall clock, which stamps the objects' creation
	// times: a creation time is replaced by its label when effects are
	// compared, and must never read as one of the clock's own times.
	now := time.Now().UTC().Truncate(time.Second).Add(-2 * time.Second)

	fw := newWorld(t, "framework", &now)
	proc, _, err := alpipe.Functions.Prepare(ctx, fw.opts)
	if err != nil {
		t.Fatalf("prepare the framework's functions: %v", err)
	}
	fw.proc = proc
	fw.url = startFramework(t)

	sv := newWorld(t, "cmd/server", &now)
	proc, cfg, err := functions.PrepareTarget(ctx, sv.opts)
	if err != nil {
		t.Fatalf("prepare cmd/server's functions: %v", err)
	}
	t.Cleanup(func() { _ = proc.Close() })
	sv.proc = proc
	mux := http.NewServeMux()
	if err := functions.Mount(mux, proc.Handlers, cfg.Target, 0, logging.Discard()); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	sv.url = srv.URL

	const csv = "pedido_id,linea,fecha,sku,cantidad,precio_unitario,cliente_id,pais\n" +
		"P-1,1,2026-03-14,MOCH-40L-AZ,1,\"89,90\",C-1,ES\n" +
		"P-2,1,2026-03-14,MOCH-40L-AZ,uno,\"89,90\",C-2,ES\n" // quarantined: cantidad
	const csvMissed = "pedido_id,linea,fecha,sku,cantidad,precio_unitario,cliente_id,pais\n" +
		"P-3,1,2026-03-15,GORRO-LANA-RJ,2,\"45,50\",C-3,FR\n"
	const dropped = "exportaciones/2026/03/14/pedidos.csv"
	const missed = "exportaciones/2026/03/14/pedidos-tarde.csv" // no event: the sweep finds it
	finalize := func(w *world, a objects.Attrs, typ string) (http.Header, string) {
		h := http.Header{"Content-Type": {"application/json"}, "Ce-Id": {"e-" + typ}, "Ce-Type": {typ}, "Ce-Specversion": {"1.0"},
			"Ce-Source": {"//storage.googleapis.com/projects/_/buckets/" + a.Bucket}, "Ce-Subject": {"objects/" + a.Name}}
		data, _ := json.Marshal(map[string]string{"bucket": a.Bucket, "name": a.Name,
			"generation": strconv.FormatInt(a.Generation, 10), "size": strconv.FormatInt(a.Size, 10), "md5Hash": a.MD5})
		return h, string(data)
	}
	jsonHeader := http.Header{"Content-Type": {"application/json"}}
	fixed := func(h http.Header, body string) func(*world) (http.Header, string) {
		return func(*world) (http.Header, string) { return h, body }
	}
	// pushed is evaluated when its step runs, on the clock of that step.
	pushed := func(id, order string) func(*world) (http.Header, string) {
		return func(*world) (http.Header, string) {
			b, _ := json.Marshal(map[string]any{
				"subscription": "projects/alpipe-test/subscriptions/pedidos-nuevos-push",
				"message": map[string]any{
					"data": base64.StdEncoding.EncodeToString([]byte(order)), "messageId": id,
					"publishTime": now.Add(-time.Minute).Format(time.RFC3339),
					"attributes": map[string]string{
						"momento_evento": now.Add(-3 * time.Minute).Format(time.RFC3339)}}})
			return jsonHeader, string(b)
		}
	}
	const order = `{"pedido_id":"P-001001","cliente_id":"C-11","pais":"ES","importe_total":"89.90","lineas":[{"sku":"MOCH-40L-AZ","cantidad":1,"precio_unitario":"89.90"}]}`

	landed := map[*world]objects.Attrs{}
	event := func(typ string) func(*world) (http.Header, string) {
		return func(w *world) (http.Header, string) { return finalize(w, landed[w], typ) }
	}
	steps := []struct {
		name     string
		function string
		request  func(w *world) (http.Header, string)
		advance  time.Duration // the clock moves before the step
		// refused: a request no real caller sends, which each path
		// refuses in its own words (4xx) before the function runs. For
		// IngestCSV cmd/server's guard answers 415; on the framework path
		// the framework's own CloudEvent decoding answers 400.
		refused bool
	}{
		{name: "a file dropped", function: functions.IngestCSVName, request: func(w *world) (http.Header, string) {
			landed[w] = w.put(t, "dropped", dropped, csv)
			return finalize(w, landed[w], functions.FinalizedType)
		}},
		{name: "its event redelivered", function: functions.IngestCSVName, advance: time.Minute, request: event(functions.FinalizedType)},
		{name: "a deletion", function: functions.IngestCSVName, request: event("google.cloud.storage.object.v1.deleted")},
		{name: "a binary-mode event without Ce-Source", function: functions.IngestCSVName, refused: true, request: func(w *world) (http.Header, string) {
			h, body := finalize(w, landed[w], functions.FinalizedType)
			h.Del("Ce-Source")
			return h, body
		}},
		{name: "a sweep within the grace period", function: functions.SweepLandingName, request: func(w *world) (http.Header, string) {
			w.put(t, "missed", missed, csvMissed)
			return jsonHeader, "{}"
		}},
		{name: "a sweep after it", function: functions.SweepLandingName, advance: 31 * time.Minute, request: fixed(jsonHeader, "{}")},
		{name: "a sweep with a text body", function: functions.SweepLandingName, request: fixed(http.Header{"Content-Type": {"text/plain"}}, "{}")},
		{name: "an order", function: functions.AggregateOrdersName, request: pushed("m-1", order)},
		{name: "the same order redelivered", function: functions.AggregateOrdersName, request: pushed("m-1", order)},
		{name: "an order that is not one", function: functions.AggregateOrdersName,
			request: pushed("m-2", `{"pedido_id":"P-9","pais":"ES","importe_total":"diez"}`)},
		{name: "a push that is not JSON", function: functions.AggregateOrdersName, request: fixed(jsonHeader, `{"message":`)},
		{name: "a form post", function: functions.AggregateOrdersName, request: fixed(http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}, "a=1")},
		{name: "the scheduler's tick", function: functions.AdvanceWatermarkName, advance: 2 * time.Minute, request: fixed(jsonHeader, "{}")},
		{name: "a tick after the window", function: functions.AdvanceWatermarkName, advance: 2 * time.Hour, request: fixed(jsonHeader, "{}")},
	}
	served := map[string]bool{}
	for _, s := range steps {
		now = now.Add(s.advance)
		served[s.function] = true
		t.Run(s.function+": "+s.name, func(t *testing.T) {
			var got [2]answer
			for i, w := range []*world{fw, sv} {
				h, body := s.request(w)
				got[i] = w.call(t, s.function, h, body)
			}
			if got[0].Code == http.StatusNotFound {
				t.Fatalf("the framework does not serve %s: %+v", s.function, got[0])
			}
			if s.refused {
				for i, w := range []*world{fw, sv} {
					if got[i].Code/100 != 4 {
						t.Errorf("%s answered %+v, want a 4xx refusal", w.name, got[i])
					}
				}
				return
			}
			if diff := cmp.Diff(got[1], got[0]); diff != "" {
				t.Errorf("answers (-cmd/server +framework):\n%s", diff)
			}
		})
	}
	for _, n := range functions.Names {
		if !served[n] {
			t.Errorf("%s is in the wiring table but no step calls it", n)
		}
	}

	keys := func(w *world) []ledger.Key {
		var ks []ledger.Key
		for _, name := range []string{dropped, missed} {
			a, err := w.gcs.Stat(ctx, ingesttest.Landing, name)
			if err != nil {
				t.Fatal(err)
			}
			ks = append(ks, ledger.Key{Bucket: a.Bucket, Object: a.Name, Generation: a.Generation})
		}
		return ks
	}
	want, got := sv.effects(t, keys(sv)), fw.effects(t, keys(fw))
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("effects (-cmd/server +framework):\n%s", diff)
	}
	// What the steps must have done, so that equal effects mean something:
	// the dropped file's valid row loaded and its invalid one quarantined,
	// the swept file's row loaded, the order in a pane, the bad order and
	// the bad push dead-lettered.
	for _, want := range []string{
		"\nP-1 | 1 | 2026-03-14 | MOCH-40L-AZ |",
		"object gs://" + ingesttest.Quarantine + "/cuarentena/lineas_pedido/exportaciones/2026/03/14/pedidos.g<dropped generation>.csv",
		"\nP-3 | 1 | 2026-03-15 | GORRO-LANA-RJ |",
		"\nventas_hora_pais | ",
		"\nP-9 | NULL | invalid: importe_total \"diez\" is not a decimal number",
		"\nNULL | NULL | invalid: not a push body",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the effects lack %q:\n%s", want, got)
		}
	}
}
