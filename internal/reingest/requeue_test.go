package reingest_test

import (
	"context"
	"encoding/csv"
	"os"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/contract"
	"github.com/alpinashop/alpipe/internal/ingest"
	"github.com/alpinashop/alpipe/internal/ledger"
	"github.com/alpinashop/alpipe/internal/reingest"
)

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
	if err != nil {
		t.Fatal(err)
	}
	a := r.put(landing, name, string(content), nil)
	rec, err := r.svc.Ingest(context.Background(), ingest.Object{Bucket: landing, Name: a.Name, Generation: a.Generation, MD5: a.MD5})
	if err != nil {
		t.Fatal(err)
	}
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
// quarantine with their reasons.
func TestRequeue(t *testing.T) {
	wantCounts := ledger.Counts{Read: 3, Loaded: 1, Quarantined: 2, Rejects: map[string]int64{"cantidad:below_min": 1, "column_count": 1}}
	wantName := "exportaciones/2026/03/14/pedidos-erp.requeue-20260315T083000Z.csv"
	tests := []struct {
		name string
		// request re-queues the fixed file, as the person hands it over.
		request func(r *rig, q, fixed string) reingest.RequeueRequest
	}{
		{
			name: "fixed in a local copy",
			request: func(r *rig, q, fixed string) reingest.RequeueRequest {
				return reingest.RequeueRequest{Bucket: quarantine, Name: q, Rows: strings.NewReader(fixed)}
			},
		},
		{
			name: "edited copy uploaded over the object, losing its metadata",
			request: func(r *rig, q, fixed string) reingest.RequeueRequest {
				r.put(quarantine, q, fixed, nil)
				return reingest.RequeueRequest{Bucket: quarantine, Name: q}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t)
			ctx := context.Background()
			q := seedQuarantine(t, r, seedName)
			fixed := fixDate(t, r.read(quarantine, q))
			rq := r.requeue()
			res, err := rq.Run(ctx, tt.request(r, q, fixed))
			if err != nil {
				t.Fatal(err)
			}
			if res.Record.State != ledger.Done || res.Rows != 3 || res.Record.Key.Object != wantName {
				t.Errorf("requeue: %s %s, %d rows; want DONE %s with 3 rows", res.Record.State, res.Record.Key, res.Rows, wantName)
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
			wantRows := [][]string{
				{"PED-2026-0314-0002", "gs://" + landing + "/exportaciones/2026/03/14/pedidos-erp.csv", "2026-03-14"},
				{"PED-2026-0314-0004", "gs://" + landing + "/" + wantName, "2026-02-28"},
			}
			const loaded = "SELECT pedido_id, source_object, fecha FROM lineas_pedido ORDER BY pedido_id"
			if diff := cmp.Diff(wantRows, r.query(loaded)); diff != "" {
				t.Errorf("loaded rows (-want +got):\n%s", diff)
			}

			// The same fix re-queued twice is the same content: the ledger
			// records a duplicate and nothing loads again.
			twice, err := rq.Run(ctx, tt.request(r, q, fixed))
			if err != nil {
				t.Fatal(err)
			}
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
				if err != nil {
					t.Fatal(err)
				}
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
	if err != nil {
		t.Fatal(err)
	}
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
	if err != nil {
		t.Fatal(err)
	}
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

// TestRequeueLongName re-queues the quarantine of a file whose name is near
// the limits (issue 23 item 2), on objects stored as files: the requeued
// name must fit there too, and a quarantine name that ingest shortened
// cannot say which file it came from once its metadata is gone.
func TestRequeueLongName(t *testing.T) {
	source := "exportaciones/2026/03/14/" + strings.Repeat("q", 222) + ".csv"
	tests := []struct {
		name string
		// dropMeta uploads the fixed file over the quarantine object, as an
		// edited copy does, losing its metadata.
		dropMeta bool
		wantErr  string
	}{
		{name: "fixed in a local copy"},
		{name: "metadata lost", dropMeta: true, wantErr: "cannot be read back from a shortened name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newDiskRig(t)
			q := seedQuarantine(t, r, source)
			fixed := fixDate(t, r.read(quarantine, q))
			req := reingest.RequeueRequest{Bucket: quarantine, Name: q, Rows: strings.NewReader(fixed)}
			if tt.dropMeta {
				r.put(quarantine, q, fixed, nil)
				req.Rows = nil
			}
			res, err := r.requeue().Run(context.Background(), req)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("requeue: %v (landed %s, source %s); want an error containing %q", err, res.Landing, res.Source, tt.wantErr)
				}
				if n := r.query("SELECT COUNT(*) FROM lineas_pedido")[0][0]; n != "1" {
					t.Errorf("%s rows loaded; want only the seed file's 1", n)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := reingest.RequeueName(source, requeueTime)
			if res.Record.State != ledger.Done || res.Rows != 3 || res.Record.Key.Object != want {
				t.Errorf("requeue: %s %s, %d rows; want DONE %s with 3 rows", res.Record.State, res.Record.Key, res.Rows, want)
			}
			if res.Source != "gs://"+landing+"/"+source {
				t.Errorf("source %s; want gs://%s/%s", res.Source, landing, source)
			}
		})
	}
}
