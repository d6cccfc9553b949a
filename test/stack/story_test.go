package stack

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	fsstore "github.com/alpinashop/alpipe/internal/docstore/firestore"
	"github.com/alpinashop/alpipe/internal/ledger"
	"github.com/alpinashop/alpipe/internal/localapi"
	"github.com/alpinashop/alpipe/internal/stream"
	"github.com/alpinashop/alpipe/test/tfconfig"
)

const (
	testdata = "../../testdata"
	story    = testdata + "/pedidos/historia.jsonl"
	// waitTimeout bounds the wait for one delivery to be acknowledged: a
	// push takes ~0.1 s, the emulator's first redelivery ~1 s, a file ~1 s.
	waitTimeout = 30 * time.Second
)

// TestDemoStories plays the embedded demo's two stories through the stack
// and expects what the embedded demo shows (internal/local/testdata/
// demo.golden): the same file outcomes, quarantined rows, loaded rows,
// order fates, ticks, panes and discarded orders, the daily aggregate
// (ventas_diarias_sku) and the dashboard views, both computed by GoogleSQL
// (the BigQuery emulator behind bqfake).
func TestDemoStories(t *testing.T) {
	t.Parallel()
	s := need(t, Options{})
	ctx := testContext(t, 2*time.Minute)
	g := readGolden(t)
	for _, st := range []struct {
		name string
		run  func(t *testing.T)
	}{
		{"file drops", func(t *testing.T) { playFiles(ctx, t, s, g) }},
		{"orders", func(t *testing.T) { playOrders(ctx, t, s, g) }},
		{"final tables", func(t *testing.T) { checkStreamTables(t, s, g) }},
	} {
		// Each part builds on the state the previous one left.
		if !t.Run(st.name, st.run) {
			t.FailNow()
		}
	}
}

// demoFiles lists the CSV files under testdata/exportaciones, sorted, as
// the object names they land as (as local.DemoFiles does).
func demoFiles(t *testing.T) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(filepath.Join(testdata, "exportaciones"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".csv") {
			return err
		}
		rel, err := filepath.Rel(testdata, p)
		out = append(out, filepath.ToSlash(rel))
		return err
	})
	check(t, err)
	sort.Strings(out)
	return out
}

// record is the ledger's record of key, which must exist.
func record(ctx context.Context, t *testing.T, l *ledger.Ledger, key ledger.Key) ledger.Record {
	t.Helper()
	rec, ok, err := l.Get(ctx, key)
	if err != nil || !ok {
		t.Fatalf("%s: no ledger record (%v)", key, err)
	}
	return rec
}

func (s *Stack) ledger(t *testing.T) *ledger.Ledger {
	t.Helper()
	store, err := fsstore.New(s.Firestore)
	check(t, err)
	l, err := ledger.New(store, ledger.Options{})
	check(t, err)
	return l
}

// asDemo names the stack's buckets as the embedded demo does: Terraform
// names them after the project (storage.tf), the demo after the local
// server's (localapi).
func (s *Stack) asDemo(text string) string {
	return strings.NewReplacer(
		s.Buckets["landing"], localapi.LandingBucket,
		s.Buckets["quarantine"], localapi.QuarantineBucket,
		s.Buckets["staging"], localapi.StagingBucket,
	).Replace(text)
}

// drop uploads a file to the landing bucket, with the Content-Encoding an
// ERP that uploads with gsutil -Z or an explicit header stores ("": none),
// waits until Eventarc's event is acknowledged and returns the ledger's
// record of the generation.
func drop(ctx context.Context, t *testing.T, s *Stack, l *ledger.Ledger, name string, data []byte, contentEncoding string) ledger.Record {
	t.Helper()
	landing := s.Buckets["landing"]
	gen, err := s.Upload(ctx, landing, name, data, contentEncoding)
	check(t, err)
	ev, err := s.Eventarc.Wait(ctx, landing, name, gen, waitTimeout)
	check(t, err)
	if !ev.Acked {
		t.Fatalf("gs://%s/%s#%d: Eventarc gave up after %v", landing, name, gen, ev.Attempts)
	}
	return record(ctx, t, l, ledger.Key{Bucket: landing, Object: name, Generation: gen})
}

// printRecord prints one file's outcome as the demo does (local.PrintRecord).
func printRecord(w io.Writer, rec ledger.Record, quarantineBucket string) {
	fmt.Fprintf(w, "gs://%s/%s\n  generation: %d  status: %s", rec.Key.Bucket, rec.Key.Object, rec.Key.Generation, rec.State)
	if rec.Feed != "" {
		fmt.Fprintf(w, "  feed: %s", rec.Feed)
	}
	fmt.Fprintf(w, "\n  rows read/loaded/quarantined: %d/%d/%d\n", rec.Counts.Read, rec.Counts.Loaded, rec.Counts.Quarantined)
	if rec.Reason != "" {
		fmt.Fprintf(w, "  reason: %s\n", rec.Reason)
	}
	if rec.DuplicateOf != nil {
		fmt.Fprintf(w, "  duplicate of: %s\n", rec.DuplicateOf)
	}
	if rec.Quarantine != "" {
		fmt.Fprintf(w, "  quarantine: gs://%s/%s\n", quarantineBucket, rec.Quarantine)
	}
}

// playFiles drops the demo's files as the ERP does, redelivers the first
// event and re-uploads the first file under another name, and compares what
// a person sees with the embedded demo.
func playFiles(ctx context.Context, t *testing.T, s *Stack, g golden) {
	l := s.ledger(t)
	quarantine := s.Buckets["quarantine"]
	files := demoFiles(t)
	var out bytes.Buffer
	var recs []ledger.Record
	for _, f := range files {
		rec := drop(ctx, t, s, l, f, read(t, f), "")
		recs = append(recs, rec)
		printRecord(&out, rec, quarantine)
	}
	// Eventarc delivers at least once: a redelivery loads nothing.
	first := recs[0]
	status, err := s.Eventarc.Redeliver(first.Key.Bucket, first.Key.Object, first.Key.Generation)
	check(t, err)
	if status/100 != 2 {
		t.Errorf("redelivery of %s: HTTP %d, want 2xx", first.Key, status)
	}
	again := record(ctx, t, l, first.Key)
	fmt.Fprintf(&out, "redelivered %s: still %s, attempt %d, nothing loaded twice\n", first.Key, again.State, again.Attempt)
	// The ERP sometimes exports the same file twice under another name.
	dup := drop(ctx, t, s, l, strings.TrimSuffix(first.Key.Object, ".csv")+"-copia.csv", read(t, files[0]), "")
	printRecord(&out, dup, quarantine)
	g.check(t, "File drops", mask(s.asDemo(out.String())))

	var q bytes.Buffer
	for _, rec := range recs {
		if rec.Quarantine != "" {
			fmt.Fprintf(&q, "gs://%s/%s\n", quarantine, rec.Quarantine)
			for _, r := range quarantineRows(ctx, t, s, rec.Quarantine) {
				fmt.Fprintf(&q, "  line %s  [%s] %s\n    %s\n", r[0], r[1], r[2], r[3])
			}
		}
	}
	g.check(t, "Quarantined rows", mask(s.asDemo(q.String())))

	for _, tc := range []struct {
		name, table string
		columns     []string
		sortBy      int
	}{
		{"Loaded order lines", "lineas_pedido", []string{"pedido_id", "linea", "fecha", "sku", "cantidad", "precio_unitario", "importe", "pais", "source_line"}, 2},
		{"Loaded reviews", "opiniones", []string{"opinion_id", "sku", "fecha", "puntuacion", "pais", "texto"}, 1},
		// Computed by GoogleSQL.
		{"(ventas_diarias_sku)", "ventas_diarias_sku", []string{"fecha", "sku", "unidades", "importe", "lineas"}, 2},
	} {
		g.check(t, tc.name, table(s.BigQuery.Rows(tc.table), tc.columns, tc.sortBy))
	}
	checkRefreshJobs(t, s, []string{"20260314", "20260315"})
	checkEventHeaders(t, s, files[0])
}

// checkEventHeaders checks the first delivery to IngestCSV carried
// Eventarc's binary-mode header set for the first file.
func checkEventHeaders(t *testing.T, s *Stack, object string) {
	t.Helper()
	reqs := s.Frontends["IngestCSV"].Requests()
	if len(reqs) == 0 {
		t.Fatal("IngestCSV's front end saw no request")
	}
	h := reqs[0].Header
	landing := s.Buckets["landing"]
	checkHeaders(t, h, map[string]string{
		"Ce-Type":        "google.cloud.storage.object.v1.finalized",
		"Ce-Specversion": "1.0",
		"Ce-Source":      "//storage.googleapis.com/projects/_/buckets/" + landing,
		"Ce-Subject":     "objects/" + object,
		"Ce-Bucket":      landing,
		"Content-Type":   "application/json; charset=utf-8",
	})
	for _, name := range []string{"Ce-Id", "Ce-Time", "User-Agent"} {
		if h.Get(name) == "" {
			t.Errorf("event header %s missing", name)
		}
	}
	var data struct {
		Bucket, Name, Generation string
	}
	if err := json.Unmarshal(reqs[0].Body, &data); err != nil || data.Bucket != landing || data.Name != object || data.Generation == "" {
		t.Errorf("StorageObjectData %s (err %v): want bucket, name and generation as a string", reqs[0].Body, err)
	}
}

// checkRefreshJobs checks ventas_diarias_sku's jobs: one successful
// WRITE_TRUNCATE query job per touched date's partition.
func checkRefreshJobs(t *testing.T, s *Stack, dates []string) {
	t.Helper()
	got := map[string]bool{}
	for _, j := range s.BigQuery.Jobs() {
		q := j.Config.Query
		if q == nil || q.DestinationTable == nil || j.Error != nil || j.State != "DONE" {
			continue
		}
		if strings.HasPrefix(q.DestinationTable.TableId, "ventas_diarias_sku$") && q.WriteDisposition == "WRITE_TRUNCATE" {
			got[strings.TrimPrefix(q.DestinationTable.TableId, "ventas_diarias_sku$")] = true
		}
	}
	if diff := cmp.Diff(dates, slices.Sorted(maps.Keys(got))); diff != "" {
		t.Errorf("ventas_diarias_sku partitions rebuilt (-want +got):\n%s", diff)
	}
}

// quarantineRows reads a quarantine file's rows, header excluded: the
// source line, the reason code, the message and the raw text (line end
// trimmed).
func quarantineRows(ctx context.Context, t *testing.T, s *Stack, object string) [][]string {
	t.Helper()
	if object == "" {
		return nil
	}
	r, err := s.Storage.Bucket(s.Buckets["quarantine"]).Object(object).NewReader(ctx)
	if err != nil {
		t.Fatalf("open quarantine %s: %v", object, err)
	}
	defer r.Close()
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	var out [][]string
	for i := 0; ; i++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("read quarantine %s: %v", object, err)
		}
		if i > 0 && len(rec) >= 4 { // not the header
			out = append(out, []string{rec[0], rec[1], rec[2], strings.TrimRight(rec[3], "\r\n")})
		}
	}
}

// storyFaults are push failures the orders story meets at the front end
// of AggregateOrders, with the deliveries of the order's message up to the
// acknowledged one; the final tables, equal to the embedded demo's, then
// show each order counted once.
var storyFaults = []struct {
	pedidoID string
	fault    Fault
	want     []string
}{
	// Handled, but the answer is lost: the redelivery finds the dedup record.
	{"P-001002", LoseAnswer, []string{"503, function answered accepted", "200, function answered duplicate"}},
	// Refused before the process: the redelivery is the first handling.
	{"P-001004", Refuse, []string{"503, function not called", "200, function answered accepted"}},
}

// playOrders publishes each order of the story to the topic at its arrival
// time (the test clock) and waits until its push is acknowledged; ticks are
// Cloud Scheduler's job, fired at their times.
func playOrders(ctx context.Context, t *testing.T, s *Stack, g golden) {
	fe := s.Frontends["AggregateOrders"]
	for _, f := range storyFaults {
		fe.Inject(matchPedido(f.pedidoID), f.fault, 1)
	}
	var outline []string
	first := map[string]string{} // pedido_id -> the message that first carried it
	for _, st := range storySteps(t) {
		at := st.Arrival
		if !st.Tick.IsZero() {
			at = st.Tick
		}
		setClock(t, s, at)
		now := at.UTC().Format("15:04:05")
		if !st.Tick.IsZero() {
			res := fireTick(ctx, t, s)
			for _, a := range res.Aggregations {
				outline = append(outline, stream.TickLine(now, a, len(res.Aggregations) > 1))
			}
			continue
		}
		id := publish(ctx, t, s, st.Order, st.EventTime)
		_, pedido := Pushed(acked(ctx, t, s, id).Body)
		if _, ok := first[pedido]; !ok {
			first[pedido] = id
		}
		fate, others := fate(t, s, fe, id)
		outline = append(outline, fmt.Sprintf("%s order %s: %s", now, pedido, fate))
		for _, o := range others {
			outline = append(outline, fmt.Sprintf("%s order %s %s: %s", now, pedido, o.Aggregation, o.Fate))
		}
	}
	if diff := cmp.Diff(g.outline(t), outline); diff != "" {
		t.Errorf("what each step did (-embedded demo +stack):\n%s", diff)
	}
	// A duplicate or a redelivery must not replace an order's dedup record
	// (package stream): it names the first message that carried the order.
	store, err := fsstore.New(s.Firestore)
	check(t, err)
	docs, err := store.List(ctx, "stream/dedup/orders")
	check(t, err)
	for _, d := range docs {
		var rec struct {
			PedidoID  string `json:"pedido_id"`
			MessageID string `json:"message_id"`
		}
		check(t, json.Unmarshal(d.Data, &rec))
		if rec.MessageID != first[rec.PedidoID] {
			t.Errorf("%s names message %s, want %s (the first of %s)", d.Path, rec.MessageID, first[rec.PedidoID], rec.PedidoID)
		}
	}
	if len(docs) == 0 {
		t.Error("no dedup record in Firestore")
	}
	for _, f := range storyFaults {
		var got []string
		for _, r := range fe.Requests() {
			if _, p := Pushed(r.Body); p != f.pedidoID {
				continue
			}
			fn := "not called"
			if r.Called {
				var res stream.Result
				_ = json.Unmarshal(r.Answer, &res)
				fn = "answered " + string(res.Fate())
			}
			if got = append(got, fmt.Sprintf("%d, function %s", r.Status, fn)); r.Acked() {
				break
			}
		}
		if diff := cmp.Diff(f.want, got); diff != "" {
			t.Errorf("%s: deliveries up to the acknowledged one (-want +got):\n%s", f.pedidoID, diff)
		}
	}
}

func matchPedido(id string) func([]byte) bool {
	return func(body []byte) bool { _, p := Pushed(body); return p == id }
}

// fate is what the function's first answer to a message says it did: the
// first 200 (a lost answer does not change what handling did) or, for an
// invalid message (answered 204 without a body), the reason recorded in
// pedidos_descartados; with the outcomes in the aggregations after the
// headline (none for an invalid message).
func fate(t *testing.T, s *Stack, fe *Frontend, messageID string) (string, []stream.Outcome) {
	t.Helper()
	for _, r := range fe.Requests() {
		if mid, _ := Pushed(r.Body); mid != messageID || !r.Called {
			continue
		}
		switch r.FnStatus {
		case http.StatusOK:
			var res stream.Result
			if err := json.Unmarshal(r.Answer, &res); err != nil {
				t.Fatalf("message %s: %v: %s", messageID, err, r.Answer)
			}
			if res.Invalid != "" {
				return res.Invalid, nil
			}
			// The demo heads an order's line with ventas_hora_pais (local.Headlined).
			aggs := res.Aggregations
			if i := slices.IndexFunc(aggs, func(o stream.Outcome) bool { return o.Aggregation == "ventas_hora_pais" }); i > 0 {
				aggs = slices.Concat(aggs[i:i+1], aggs[:i], aggs[i+1:])
			}
			return string(res.Fate()), aggs[min(1, len(aggs)):]
		case http.StatusNoContent:
			for _, row := range s.BigQuery.Rows("pedidos_descartados") {
				if row["message_id"] == messageID {
					return fmt.Sprint(row["reason"]), nil
				}
			}
			t.Fatalf("message %s answered 204 but is not in pedidos_descartados", messageID)
		}
	}
	t.Fatalf("message %s: no answer from the function", messageID)
	return "", nil
}

// checkStreamTables compares the panes, the discarded orders and each
// aggregation's view, as GoogleSQL answers it, with the demo's tables.
func checkStreamTables(t *testing.T, s *Stack, g golden) {
	panes := s.BigQuery.Rows("ventas_hora_pais_paneles")
	g.check(t, "(ventas_hora_pais_paneles)", table(panes,
		[]string{"window_start", "pais", "pane_index", "timing", "importe", "pedidos", "unidades", "watermark", "emitted_at"}, 3))
	for _, v := range []struct{ name, key string }{{"ventas_hora_pais", "pais"}, {"ventas_sku_hora_movil", "sku"}} {
		rows, err := s.BigQuery.Query("SELECT * FROM " + v.name)
		if err != nil {
			t.Fatalf("view %s: %v", v.name, err)
		}
		g.check(t, "("+v.name+")", table(rows,
			[]string{"window_start", "window_end", v.key, "importe", "pedidos", "unidades", "timing", "pane_index"}, 3))
	}
	discarded := s.BigQuery.Rows("pedidos_descartados")
	for i, r := range discarded {
		discarded[i] = maps.Clone(r) // the fake's own row
		for k, v := range r {
			if v == nil {
				discarded[i][k] = "-" // as the demo's tables print an absent value
			}
		}
	}
	got := table(discarded, []string{"pedido_id", "aggregation", "reason", "event_time", "window_start", "watermark", "received_at"}, 0)
	g.check(t, "(pedidos_descartados)", sortedByReceived(got))
}

// sortedByReceived keeps the header and sorts the rows as the demo's query
// orders them: by received_at (the last column), then aggregation (the
// second) and window_start (the third from the end), which order the rows
// of an order too late for several windows.
func sortedByReceived(tbl string) string {
	lines := strings.Split(strings.TrimSuffix(tbl, "\n"), "\n")
	rows := lines[1:]
	key := func(row string) string {
		f := strings.Fields(row)
		return f[len(f)-1] + "|" + f[1] + "|" + f[len(f)-3]
	}
	sort.SliceStable(rows, func(i, j int) bool { return key(rows[i]) < key(rows[j]) })
	return strings.Join(append(lines[:1], rows...), "\n") + "\n"
}

// goldenPath is the embedded demo's expected output: the stack must show
// the same, so it has no golden file of its own.
const goldenPath = "internal/local/testdata/demo.golden"

// golden is demo.golden's sections by title, without the blank lines that
// end them.
type golden map[string]string

func readGolden(t testing.TB) golden {
	t.Helper()
	root, err := tfconfig.RepoDir()
	check(t, err)
	b, err := os.ReadFile(filepath.Join(root, goldenPath))
	if err != nil {
		t.Fatalf("read the embedded demo's golden file: %v", err)
	}
	g := golden{}
	text := string(b)
	headers := regexp.MustCompile(`(?m)^== (.+) ==\n`).FindAllStringSubmatchIndex(text, -1)
	for i, h := range headers {
		end := len(text)
		if i+1 < len(headers) {
			end = headers[i+1][0]
		}
		g[text[h[2]:h[3]]] = strings.TrimRight(text[h[1]:end], "\n") + "\n"
	}
	return g
}

// section is the body of the section whose title contains part.
func (g golden) section(t testing.TB, part string) string {
	t.Helper()
	for title, body := range g {
		if strings.Contains(title, part) {
			return body
		}
	}
	t.Fatalf("%s has no section %q", goldenPath, part)
	return ""
}

// check compares the section whose title contains part with what the stack
// shows.
func (g golden) check(t testing.TB, part, got string) {
	t.Helper()
	if diff := cmp.Diff(g.section(t, part), got); diff != "" {
		t.Errorf("%s (-embedded demo +stack):\n%s", part, diff)
	}
}

// outline is the orders story reduced to what each step did: the order's
// fate ("17:05:00 order P-001001: accepted"), its fate in every other
// aggregation ("17:05:00 order P-001001 ventas_sku_hora_movil: accepted")
// and each tick's summary line. Windows and panes are left to the final
// tables, which show them all.
func (g golden) outline(t testing.TB) []string {
	t.Helper()
	orderLine := regexp.MustCompile(`^(\S+) order (\S+)\s+event \S+: (.*?)(?: \(window .*)?$`)
	aggregationLine := regexp.MustCompile(`^ {9}([a-z0-9_]+): (\S+)`)
	tickLine := regexp.MustCompile(`^\S+ tick(?: \S+)?: `)
	var out []string
	order := "" // the order whose lines follow
	for _, line := range strings.Split(g.section(t, "Orders in real time"), "\n") {
		if m := orderLine.FindStringSubmatch(line); m != nil {
			order = m[1] + " order " + m[2]
			out = append(out, order+": "+m[3])
		} else if m := aggregationLine.FindStringSubmatch(line); m != nil && order != "" {
			out = append(out, order+" "+m[1]+": "+m[2])
		} else if tickLine.MatchString(line) {
			order = ""
			out = append(out, line)
		}
	}
	if len(out) == 0 {
		t.Fatalf("%s has no orders story", goldenPath)
	}
	return out
}

var generation = regexp.MustCompile(`(#|\.g|generation: )\d{6,}`)

// mask hides generations, which come from the fake GCS's clock.
func mask(s string) string { return generation.ReplaceAllString(s, "${1}GEN") }
