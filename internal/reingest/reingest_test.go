package reingest_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/contract"
	"github.com/alpinashop/alpipe/internal/ingest"
	"github.com/alpinashop/alpipe/internal/ingest/ingesttest"
	"github.com/alpinashop/alpipe/internal/ledger"
	"github.com/alpinashop/alpipe/internal/logging"
	"github.com/alpinashop/alpipe/internal/objects"
	"github.com/alpinashop/alpipe/internal/reingest"
	"github.com/alpinashop/alpipe/internal/warehouse/duckdb"
)

// ingestFunc is an Ingester that wraps another with a test's behaviour.
type ingestFunc func(ctx context.Context, a objects.Attrs) (ledger.Record, error)

func (f ingestFunc) Ingest(ctx context.Context, a objects.Attrs) (ledger.Record, error) {
	return f(ctx, a)
}

// TestBackfillResumesAfterInterrupt interrupts a backfill midway with no
// grace, so the objects in flight are cancelled wherever they are, then
// runs it again after the cut attempts' leases expire: every row is loaded
// exactly once, and a third run only skips.
func TestBackfillResumesAfterInterrupt(t *testing.T) {
	r := newRig(t)
	const files, rowsPerFile = 12, 40
	want := map[string]string{} // object -> rows, distinct orders
	for d := 1; d <= files; d++ {
		name := fmt.Sprintf("exportaciones/2026/02/%02d/pedidos.csv", d)
		content, loaded := orderFile(d, "BF", rowsPerFile)
		r.put(landing, name, content, nil)
		want["gs://"+landing+"/"+name] = fmt.Sprint(loaded, " ", loaded)
	}
	other, _ := orderFile(28, "OUT", 5)
	r.put(landing, "exportaciones/2026/03/01/fuera.csv", other, nil) // outside the prefix

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Cancelled when the fourth object finishes, as a person pressing
	// Ctrl-C would: the objects still in flight are cut short.
	var done atomic.Int64
	stopper := ingestFunc(func(ctx context.Context, a objects.Attrs) (ledger.Record, error) {
		rec, err := reingest.Direct{Service: r.svc, BusyWait: time.Millisecond}.Ingest(ctx, a)
		if done.Add(1) == 4 {
			cancel()
		}
		return rec, err
	})
	run := func(ctx context.Context, ing reingest.Ingester, concurrency int) reingest.Summary {
		t.Helper()
		b := &reingest.Backfill{Objects: r.gcs, Ledger: r.led, Ingest: ing, Concurrency: concurrency}
		sum, err := b.Run(ctx, landing, "exportaciones/2026/02/")
		check(t, err)
		return sum
	}
	first := run(ctx, stopper, 3)
	if !first.Interrupted || first.Loaded >= files {
		t.Fatalf("first run: interrupted %v after loading %d of %d files; want an interruption midway", first.Interrupted, first.Loaded, files)
	}
	finished := 0
	for _, rec := range listLedger(t, r) {
		if rec.State.Final() {
			finished++
		}
	}
	t.Logf("first run: %d loaded, %d cut short, %d final in the ledger", first.Loaded, len(first.Failed), finished)

	// An attempt cancelled between its load and its ledger record keeps
	// its lease; the next run takes over once it expires.
	r.clock.Advance(11 * time.Minute)
	second := run(context.Background(), reingest.Direct{Service: r.svc}, 3)
	if second.Interrupted || len(second.Failed) > 0 {
		t.Fatalf("second run: interrupted %v, failed %v", second.Interrupted, second.Failed)
	}
	if second.Skipped != int64(finished) || second.Skipped+second.Loaded != files {
		t.Errorf("second run: skipped %d, loaded %d; want %d skipped and the other %d loaded", second.Skipped, second.Loaded, finished, files-finished)
	}

	got := map[string]string{}
	const perFile = "SELECT source_object, COUNT(*), COUNT(DISTINCT pedido_id) FROM lineas_pedido" +
		" GROUP BY 1"
	for _, row := range r.query(perFile) {
		got[row[0]] = row[1] + " " + row[2]
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("rows and distinct orders per file (-want +got):\n%s", diff)
	}
	for _, rec := range listLedger(t, r) {
		if rec.State != ledger.Done || rec.Counts.Read != rowsPerFile || rec.Counts.Read != rec.Counts.Loaded+rec.Counts.Quarantined {
			t.Errorf("%s: %s %+v", rec.Key, rec.State, rec.Counts)
		}
	}

	third := run(context.Background(), reingest.Direct{Service: r.svc}, 0)
	if third.Skipped != files || third.Loaded != 0 || third.RowsRead != 0 {
		t.Errorf("third run: %+v; want all %d skipped", third, files)
	}
}

func listLedger(t *testing.T, r *rig) []ledger.Record {
	t.Helper()
	recs, err := r.led.List(context.Background())
	check(t, err)
	return recs
}

// TestBackfillSummary covers every outcome an object can have.
func TestBackfillSummary(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	clean, cleanLoaded := orderFile(1, "A", 10)
	dirty, dirtyLoaded := orderFile(2, "B", 20) // rows 10 and 20 negative, 17 in country XX
	before, _ := orderFile(3, "C", 5)
	a := r.put(landing, "exportaciones/2026/03/01/a.csv", clean, nil)
	r.put(landing, "exportaciones/2026/03/02/b.csv", dirty, nil)
	c := r.put(landing, "exportaciones/2026/03/02/c.csv", clean, nil) // a's content again
	pre := r.put(landing, "exportaciones/2026/03/03/antes.csv", before, nil)
	empty := r.put(landing, "exportaciones/2026/03/04/vacio.csv", "", nil)
	r.put(landing, "exportaciones/2026/03/05/", "", nil) // a console's folder placeholder
	r.put(landing, "exportaciones/2026/03/05/caido.csv", clean+"PED-X,1,2026-03-05,S,1,1,C,ES\n", nil)
	r.put(landing, "exportaciones/2026/03/notas.txt", "hello", nil)
	if _, err := r.svc.Ingest(ctx, ingest.Object{Bucket: landing, Name: pre.Name, Generation: pre.Generation, MD5: pre.MD5}); err != nil {
		t.Fatal(err)
	}

	var progress []reingest.Progress
	b := &reingest.Backfill{
		Objects: r.gcs, Ledger: r.led, Concurrency: 1,
		// One object fails, as in an outage.
		Ingest: ingestFunc(func(ctx context.Context, a objects.Attrs) (ledger.Record, error) {
			if a.Name == "exportaciones/2026/03/05/caido.csv" {
				return ledger.Record{}, errors.New("load into lineas_pedido: warehouse unavailable")
			}
			return reingest.Direct{Service: r.svc}.Ingest(ctx, a)
		}),
		Progress: func(p reingest.Progress) { progress = append(progress, p) },
	}
	got, err := b.Run(ctx, landing, "exportaciones/2026/03/")
	check(t, err)
	got.Seconds = 0
	key := func(a objects.Attrs) string {
		return ledger.Key{Bucket: a.Bucket, Object: a.Name, Generation: a.Generation}.String()
	}
	caido, err := r.gcs.Stat(ctx, landing, "exportaciones/2026/03/05/caido.csv")
	check(t, err)
	want := reingest.Summary{
		Prefix:          "gs://" + landing + "/exportaciones/2026/03/",
		Listed:          7,
		Loaded:          2,
		RowsRead:        30,
		RowsLoaded:      int64(cleanLoaded + dirtyLoaded),
		RowsQuarantined: 4,
		Rejects:         map[string]int64{"cantidad:below_min": 3, "pais:not_iso3166": 1},
		Skipped:         1,
		NoContract:      1,
		Duplicates:      []reingest.FileNote{{Object: key(c), Reason: fmt.Sprintf("same content (MD5 %s) as %s", a.MD5, key(a))}},
		Rejected:        []reingest.FileNote{{Object: key(empty), Reason: "empty object: no header row"}},
		Failed:          []reingest.FileNote{{Object: key(caido), Reason: "load into lineas_pedido: warehouse unavailable"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("summary (-want +got):\n%s", diff)
	}
	if n := len(progress); n == 0 || progress[n-1].Done != 7 || progress[n-1].Total != 7 {
		t.Errorf("last progress %+v; want 7 of 7 done", progress[len(progress)-1])
	}
}

func TestProgressETA(t *testing.T) {
	tests := []struct {
		name string
		p    reingest.Progress
		want time.Duration
		ok   bool
	}{
		{name: "still counting", p: reingest.Progress{Total: -1, Done: 3, Elapsed: time.Second}},
		{name: "nothing done yet", p: reingest.Progress{Total: 4, TotalBytes: 400, Elapsed: time.Second}},
		{name: "by bytes", p: reingest.Progress{Total: 10, TotalBytes: 1000, Done: 2, DoneBytes: 250, WorkBytes: 250, Elapsed: 10 * time.Second}, want: 30 * time.Second, ok: true},
		{name: "skipped bytes count as done, not as rate", p: reingest.Progress{Total: 10, TotalBytes: 1000, Done: 4, DoneBytes: 500, WorkBytes: 250, Elapsed: 10 * time.Second}, want: 20 * time.Second, ok: true},
		{name: "empty objects: by count", p: reingest.Progress{Total: 4, Done: 2, Elapsed: 10 * time.Second}, want: 10 * time.Second, ok: true},
		{name: "finished", p: reingest.Progress{Total: 4, Done: 4, Elapsed: time.Minute}, want: 0, ok: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := tt.p.ETA()
			if got != tt.want || ok != tt.ok {
				t.Errorf("ETA() = %v, %v; want %v, %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestProgressPrinter(t *testing.T) {
	obj := objects.Attrs{Bucket: "b", Name: "exportaciones/2026/03/14/p.csv", Generation: 7, Size: 100}
	done := &reingest.Outcome{Object: obj, Record: ledger.Record{State: ledger.Done, Counts: ledger.Counts{Read: 1500, Loaded: 1497, Quarantined: 3}}}
	skipped := &reingest.Outcome{Object: obj, Skipped: true, Record: ledger.Record{State: ledger.Duplicate}}
	failed := &reingest.Outcome{Object: obj, Err: errors.New("load into lineas_pedido:\n  timeout")}
	at := reingest.Progress{Total: 8, TotalBytes: 800, Done: 2, DoneBytes: 200, WorkBytes: 200, Rows: 3000, Elapsed: 2 * time.Second}
	tests := []struct {
		name    string
		tty     bool
		updates []reingest.Progress
		want    string
	}{
		{
			name:    "log lines, one per object",
			updates: []reingest.Progress{with(at, done), with(at, nil), with(at, skipped), with(at, failed)},
			want: "backfill 2/8 gs://b/exportaciones/2026/03/14/p.csv#7 DONE rows 1,500 loaded 1,497 quarantined 3 (1,500 rows/s, ETA 6s)\n" +
				"backfill 2/8 gs://b/exportaciones/2026/03/14/p.csv#7 skipped: already DUPLICATE (1,500 rows/s, ETA 6s)\n" +
				"backfill 2/8 gs://b/exportaciones/2026/03/14/p.csv#7 FAILED: load into lineas_pedido: timeout (1,500 rows/s, ETA 6s)\n",
		},
		{
			name:    "only skips so far: no rate, no ETA",
			updates: []reingest.Progress{{Total: 8, TotalBytes: 800, Done: 1, DoneBytes: 100, Elapsed: 30 * time.Millisecond, Last: skipped}},
			want:    "backfill 1/8 gs://b/exportaciones/2026/03/14/p.csv#7 skipped: already DUPLICATE\n",
		},
		{
			name:    "log lines while the count is unknown",
			updates: []reingest.Progress{{Total: -1, Done: 1, Rows: 1500, Elapsed: time.Second, Last: done}},
			want:    "backfill 1/? gs://b/exportaciones/2026/03/14/p.csv#7 DONE rows 1,500 loaded 1,497 quarantined 3 (1,500 rows/s, ETA ?)\n",
		},
		{
			name:    "terminal line",
			tty:     true,
			updates: []reingest.Progress{with(at, done)},
			want:    "\r[######------------------] 2/8 objects  3,000 rows  1,500 rows/s  ETA 6s\n",
		},
		{
			name:    "terminal line: throttled updates, the last drawn on finish",
			tty:     true,
			updates: []reingest.Progress{{Total: -1, Done: 1, Rows: 10, Elapsed: time.Second}, {Total: -1, Done: 2, Rows: 20, Elapsed: time.Second}},
			want:    "\r1 object (listing...)  10 rows  10 rows/s  ETA ?\r2 objects (listing...)  20 rows  20 rows/s  ETA ?\n",
		},
		{
			name:    "terminal line while listing",
			tty:     true,
			updates: []reingest.Progress{{Total: -1, Done: 1234, Rows: 1234567, Elapsed: time.Second}},
			want:    "\r1,234 objects (listing...)  1,234,567 rows  1,234,567 rows/s  ETA ?\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			p := reingest.NewProgressPrinter(&buf, tt.tty)
			for _, u := range tt.updates {
				p.Update(u)
			}
			p.Finish()
			if diff := cmp.Diff(tt.want, buf.String()); diff != "" {
				t.Errorf("output (-want +got):\n%s", diff)
			}
		})
	}
}

func with(p reingest.Progress, last *reingest.Outcome) reingest.Progress {
	p.Last = last
	return p
}

const landing, quarantine = ingesttest.Landing, ingesttest.Quarantine

// rig is the ingest service on real parts (see ingesttest), on a settable
// clock.
type rig struct {
	t     *testing.T
	gcs   *objects.GCS
	led   *ledger.Ledger
	wh    *duckdb.Warehouse
	feeds *contract.Registry
	svc   *ingest.Service
	clock *ingesttest.Clock
}

func newRig(t *testing.T) *rig { return rigOn(t, ingesttest.NewParts(t, landing, quarantine)) }

// newDiskRig is newRig with objects stored as files, as `alpipe serve`
// stores them: a name the file system cannot hold fails.
func newDiskRig(t *testing.T) *rig { return rigOn(t, ingesttest.NewDiskParts(t, landing, quarantine)) }

func rigOn(t *testing.T, p *ingesttest.Parts) *rig {
	t.Helper()
	r := &rig{t: t, gcs: p.GCS, led: p.Ledger, wh: p.Warehouse, feeds: p.Feeds,
		clock: ingesttest.NewClock(time.Date(2026, 3, 15, 2, 0, 0, 0, time.UTC))}
	var err error
	r.svc, err = ingest.New(p.GCS, p.Ledger, p.Warehouse, p.Feeds,
		ingest.Config{QuarantineBucket: quarantine, QuarantinePrefix: "cuarentena/"},
		r.clock.Now, logging.Discard())
	check(t, err)
	return r
}

// requeue re-queues through the rig's ingest service, naming files at
// requeueTime.
func (r *rig) requeue() *reingest.Requeue {
	return &reingest.Requeue{Objects: r.gcs, Ingest: reingest.Direct{Service: r.svc}, Feeds: r.feeds, LandingBucket: landing,
		Now: func() time.Time { return requeueTime }}
}

func (r *rig) put(bucket, name, content string, meta map[string]string) objects.Attrs {
	r.t.Helper()
	return ingesttest.Put(r.t, r.gcs, bucket, name, content, meta)
}

func (r *rig) read(bucket, name string) string {
	r.t.Helper()
	rc, err := r.gcs.Open(context.Background(), bucket, name, 0)
	check(r.t, err)
	defer rc.Close()
	b, err := io.ReadAll(rc)
	check(r.t, err)
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
func orderFile(day int, tag string, n int) (content string, loaded int) {
	var b strings.Builder
	b.WriteString(header)
	for i := 1; i <= n; i++ {
		qty, country := "2", "ES"
		switch {
		case i%10 == 0:
			qty = "-1"
		case i%17 == 0:
			country = "XX"
		default:
			loaded++
		}
		fmt.Fprintf(&b, "PED-%s-%02d-%04d,1,2026-02-%02d,SKU-%d,%s,\"12,50\",CLI-%d,%s\n", tag, day, i, day, i%7, qty, i, country)
	}
	return b.String(), loaded
}

func csvRows(t *testing.T, text string) [][]string {
	t.Helper()
	cr := csv.NewReader(strings.NewReader(text))
	cr.FieldsPerRecord = -1
	rows, err := cr.ReadAll()
	check(t, err)
	return rows
}

const (
	seedName = "exportaciones/2026/03/14/pedidos-erp.csv"
	seedFile = "../../testdata/" + seedName
)

var requeueTime = time.Date(2026, 3, 15, 8, 30, 0, 0, time.UTC)

// seedQuarantine lands the seed order file (one good row, three bad) as
// name, ingests it and returns its quarantine object's name.
func seedQuarantine(t *testing.T, r *rig, name string) string {
	t.Helper()
	content, err := os.ReadFile(seedFile)
	check(t, err)
	a := r.put(landing, name, string(content), nil)
	rec, err := r.svc.Ingest(context.Background(), ingest.Object{Bucket: landing, Name: a.Name, Generation: a.Generation, MD5: a.MD5})
	check(t, err)
	if c := rec.Counts; c.Read != 4 || c.Loaded != 1 || c.Quarantined != 3 || rec.Quarantine == "" {
		t.Fatalf("seed file: %+v, quarantine %q; want 4 read, 1 loaded, 3 quarantined", c, rec.Quarantine)
	}
	return rec.Quarantine
}

// fixDate is what a person does in a spreadsheet: correct the impossible
// date of one quarantined row and save the file.
func fixDate(t *testing.T, quarantineCSV string) string {
	t.Helper()
	rows := csvRows(t, quarantineCSV)
	fixed := 0
	for _, row := range rows[1:] {
		if strings.Contains(row[3], "2026-02-30") {
			row[3] = strings.Replace(row[3], "2026-02-30", "2026-02-28", 1)
			fixed++
		}
	}
	if fixed != 1 {
		t.Fatalf("fixed %d rows of %q; want 1", fixed, quarantineCSV)
	}
	var b strings.Builder
	w := csv.NewWriter(&b)
	if err := w.WriteAll(rows); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestRequeue fixes one of the three quarantined rows of the seed file and
// re-queues it: the fixed row loads once, the two still wrong go back to
// quarantine with their reasons. A source whose name is near the limits
// (issue 23 item 2) is re-queued on objects stored as files, as `alpipe
// serve` stores them: the requeued name must fit there too, and a
// quarantine name that ingest shortened cannot say which file it came from
// once its metadata is gone.
func TestRequeue(t *testing.T) {
	wantCounts := ledger.Counts{Read: 3, Loaded: 1, Quarantined: 2, Rejects: map[string]int64{"cantidad:below_min": 1, "column_count": 1}}
	long := "exportaciones/2026/03/14/" + strings.Repeat("q", 222) + ".csv"
	// local re-queues the fixed file from a local copy; uploaded uploads it
	// over the quarantine object, as an edited copy does, losing its
	// metadata.
	local := func(r *rig, q, fixed string) reingest.RequeueRequest {
		return reingest.RequeueRequest{Bucket: quarantine, Name: q, Rows: strings.NewReader(fixed)}
	}
	uploaded := func(r *rig, q, fixed string) reingest.RequeueRequest {
		r.put(quarantine, q, fixed, nil)
		return reingest.RequeueRequest{Bucket: quarantine, Name: q}
	}
	tests := []struct {
		name    string
		source  string
		newRig  func(*testing.T) *rig
		request func(r *rig, q, fixed string) reingest.RequeueRequest
		wantErr string
	}{
		{name: "fixed in a local copy", source: seedName, newRig: newRig, request: local},
		{name: "edited copy uploaded over the object, losing its metadata", source: seedName,
			newRig: newRig, request: uploaded},
		{name: "a long name fixed in a local copy", source: long, newRig: newDiskRig, request: local},
		{name: "a long name's metadata lost", source: long, newRig: newDiskRig, request: uploaded,
			wantErr: "cannot be read back from a shortened name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.newRig(t)
			ctx := context.Background()
			q := seedQuarantine(t, r, tt.source)
			fixed := fixDate(t, r.read(quarantine, q))
			rq := r.requeue()
			res, err := rq.Run(ctx, tt.request(r, q, fixed))
			const loaded = "SELECT pedido_id, source_object, fecha FROM lineas_pedido ORDER BY pedido_id"
			seedRow := []string{"PED-2026-0314-0002", "gs://" + landing + "/" + tt.source, "2026-03-14"}
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("requeue: %v (landed %s, source %s); want an error containing %q", err, res.Landing, res.Source, tt.wantErr)
				}
				if diff := cmp.Diff([][]string{seedRow}, r.query(loaded)); diff != "" {
					t.Errorf("loaded rows (-want +got):\n%s", diff)
				}
				return
			}
			check(t, err)
			wantName := reingest.RequeueName(tt.source, requeueTime)
			if res.Record.State != ledger.Done || res.Rows != 3 || res.Record.Key.Object != wantName {
				t.Errorf("requeue: %s %s, %d rows; want DONE %s with 3 rows", res.Record.State, res.Record.Key, res.Rows, wantName)
			}
			if res.Source != "gs://"+landing+"/"+tt.source {
				t.Errorf("source %s; want gs://%s/%s", res.Source, landing, tt.source)
			}
			if diff := cmp.Diff(wantCounts, res.Record.Counts); diff != "" {
				t.Errorf("counts (-want +got):\n%s", diff)
			}
			// The source header (the record reader drops its BOM) or, with
			// the metadata gone, the feed's declared one: here both read so.
			const header = "pedido_id,linea,fecha,sku,cantidad,precio_unitario,cliente_id,pais"
			if got, _, _ := strings.Cut(r.read(landing, wantName), "\n"); got != header {
				t.Errorf("landing header %q; want %q", got, header)
			}

			again := csvRows(t, r.read(quarantine, res.Record.Quarantine))
			var codes []string
			for _, row := range again[1:] {
				codes = append(codes, row[1])
			}
			if diff := cmp.Diff([]string{"column_count", "cantidad:below_min"}, codes); diff != "" {
				t.Errorf("back in quarantine (-want +got):\n%s", diff)
			}
			fixedRow := []string{"PED-2026-0314-0004", "gs://" + landing + "/" + wantName, "2026-02-28"}
			wantRows := [][]string{seedRow, fixedRow}
			if diff := cmp.Diff(wantRows, r.query(loaded)); diff != "" {
				t.Errorf("loaded rows (-want +got):\n%s", diff)
			}

			// The same fix re-queued twice is the same content: the ledger
			// records a duplicate and nothing loads again.
			twice, err := rq.Run(ctx, tt.request(r, q, fixed))
			check(t, err)
			if twice.Record.State != ledger.Duplicate {
				t.Errorf("second requeue: %s; want DUPLICATE", twice.Record.State)
			}
			if diff := cmp.Diff(wantRows, r.query(loaded)); diff != "" {
				t.Errorf("loaded rows after a second requeue (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRequeueRefuses(t *testing.T) {
	tests := []struct {
		name    string
		content string
		object  string
		wantErr string
	}{
		{name: "not a quarantine file", content: "a,b\n1,2\n", wantErr: "is not a quarantine file's"},
		{name: "every row emptied", content: "linea,codigo,motivo,fila\n2,x,y,\n3,x,y,  \n", wantErr: "no row left to re-queue"},
		{name: "empty file", content: "", wantErr: "the quarantine file is empty"},
		{name: "a row lost its fila", content: "linea,codigo,motivo,fila\n2,x,y,a\n3,x,y\n", wantErr: "line 3: 3 fields, want 4"},
		{name: "name outside the feed", content: "linea,codigo,motivo,fila\n2,x,y,a\n", object: "otros/x.csv", wantErr: "does not match feed lineas_pedido's object pattern"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t)
			q := seedQuarantine(t, r, seedName)
			_, err := r.requeue().Run(context.Background(), reingest.RequeueRequest{Bucket: quarantine, Name: q, Rows: strings.NewReader(tt.content), Object: tt.object})
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error %v; want one containing %q", err, tt.wantErr)
			}
			if n := r.query("SELECT COUNT(*) FROM lineas_pedido")[0][0]; n != "1" {
				t.Errorf("%s rows loaded; want only the seed file's 1", n)
			}
			var landed []string
			for a, err := range r.gcs.List(context.Background(), landing, "") {
				check(t, err)
				landed = append(landed, a.Name)
			}
			if diff := cmp.Diff([]string{"exportaciones/2026/03/14/pedidos-erp.csv"}, landed); diff != "" {
				t.Errorf("landing bucket (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRequeueName(t *testing.T) {
	feeds, err := contract.Default()
	check(t, err)
	at := time.Date(2026, 3, 15, 9, 4, 5, 0, time.FixedZone("CET", 3600))
	const day, month, stamp = "exportaciones/2026/03/14/", "exportaciones/2026/03/", ".requeue-20260315T080405Z.csv"
	q, euro, o := strings.Repeat("q", 247), strings.Repeat("€", 80), strings.Repeat("o", 240)
	tests := []struct {
		name, source, want string
	}{
		{name: "next to the source", source: day + "pedidos-erp.csv", want: day + "pedidos-erp" + stamp},
		{name: "a requeue of a requeue replaces the time", source: day + "pedidos-erp.requeue-20260315T070000Z.csv", want: day + "pedidos-erp" + stamp},
		{name: "no extension", source: "x/datos", want: "x/datos" + stamp},
		// The new object is plain CSV: named .gz it would match no feed,
		// and ingest would refuse it as not gzip.
		{name: "a gzip source", source: day + "p.csv.gz", want: day + "p" + stamp},
		// 247 + 25 + 4 bytes: more than a local segment holds.
		{name: "a long source is cut, with a hash of its name", source: day + q + ".csv", want: day + strings.Repeat("q", 180) + "~69a5635df23f8e16" + stamp},
		{name: "a requeue of a cut requeue replaces the time", source: day + strings.Repeat("q", 180) + "~69a5635df23f8e16.requeue-20260315T070000Z.csv", want: day + strings.Repeat("q", 180) + "~69a5635df23f8e16" + stamp},
		{name: "cut between characters, not inside one", source: day + euro + ".csv", want: day + strings.Repeat("€", 60) + "~882fa2597a35c484" + stamp},
		{name: "a long review file stays a review file", source: month + "opiniones-" + o + ".csv", want: month + "opiniones-" + strings.Repeat("o", 170) + "~bd4b14c856d68b18" + stamp},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := reingest.RequeueName(tt.source, at)
			if got != tt.want {
				t.Errorf("RequeueName(%q) = %q; want %q", tt.source, got, tt.want)
			}
			// Where it is written: Cloud Storage and the local fake (each
			// segment beside its ".metadata" file).
			if len(got) > 1024 || !utf8.ValidString(got) {
				t.Errorf("RequeueName(%q) is %d bytes or not UTF-8; want valid UTF-8 of at most 1024 bytes", tt.source, len(got))
			}
			for seg := range strings.SplitSeq(got, "/") {
				if len(seg) > 255-len(".metadata") {
					t.Errorf("RequeueName(%q) has a segment of %d bytes; want at most %d", tt.source, len(seg), 255-len(".metadata"))
				}
			}
			// Where it goes: the source's feed, so requeue accepts it.
			if f, ok := feeds.Match(tt.source); ok {
				if g, ok := feeds.Match(got); !ok || g.Name() != f.Name() {
					t.Errorf("RequeueName(%q) = %q does not match feed %s's object pattern", tt.source, got, f.Name())
				}
			}
		})
	}
}

func TestSourceOf(t *testing.T) {
	feeds, err := contract.Default()
	check(t, err)
	const notOne = "is not <prefix><feed>/<object>.g<generation>.csv"
	tests := []struct {
		name, quarantine, feed, source string
		wantErr                        string
	}{
		{name: "order lines", quarantine: "cuarentena/lineas_pedido/exportaciones/2026/03/14/pedidos-erp.g1773500000000000.csv", feed: "lineas_pedido", source: "exportaciones/2026/03/14/pedidos-erp.csv"},
		{name: "reviews, no prefix", quarantine: "opiniones/exportaciones/2026/03/opiniones-marzo.g12.csv", feed: "opiniones", source: "exportaciones/2026/03/opiniones-marzo.csv"},
		{name: "a requeued file's quarantine", quarantine: "q/lineas_pedido/exportaciones/2026/03/14/p.requeue-20260315T080405Z.g9.csv", feed: "lineas_pedido", source: "exportaciones/2026/03/14/p.requeue-20260315T080405Z.csv"},
		{name: "no generation", quarantine: "cuarentena/lineas_pedido/exportaciones/2026/03/14/p.csv", wantErr: notOne},
		{name: "source outside the feed", quarantine: "cuarentena/lineas_pedido/otros/p.g1.csv", wantErr: notOne},
		{name: "feed name inside a word", quarantine: "cuarentena/xlineas_pedido/exportaciones/2026/03/14/p.g1.csv", wantErr: notOne},
		// ingest cut the 247 q's of the source: reading the rest back
		// would name a file that never existed.
		{name: "a shortened name", quarantine: "cuarentena/lineas_pedido/exportaciones/2026/03/14/" + strings.Repeat("q", 200) + "~69a5635df23f8e16.g1.csv",
			wantErr: "cannot be read back from a shortened name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, src, err := reingest.SourceOf(feeds, tt.quarantine)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("SourceOf(%q) = %v, %q, %v; want an error containing %q", tt.quarantine, f, src, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("SourceOf(%q): %v", tt.quarantine, err)
			}
			if diff := cmp.Diff([2]string{tt.feed, tt.source}, [2]string{f.Name(), src}); diff != "" {
				t.Errorf("SourceOf(%q) (-want +got):\n%s", tt.quarantine, diff)
			}
		})
	}
}

// check fails the test at once on an error of the test's plumbing.
func check(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
