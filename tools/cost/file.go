package cost

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/base64"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/alpinashop/alpipe/internal/contract"
	"github.com/alpinashop/alpipe/internal/docstore/boltstore"
	"github.com/alpinashop/alpipe/internal/ingest"
	"github.com/alpinashop/alpipe/internal/ledger"
	"github.com/alpinashop/alpipe/internal/objects"
	"github.com/alpinashop/alpipe/internal/warehouse"
)

// FileScenario is the nightly ERP export: Lines order lines of Day, a
// share of them dated the day before (late corrections), and a share of
// broken rows.
type FileScenario struct {
	Lines     int64      `json:"lines"`
	Day       time.Time  `json:"day"`
	DayBefore PerMillion `json:"day_before_ppm"`
	Broken    PerMillion `json:"broken_ppm"`
	Seed      uint64     `json:"seed"`
}

// DefaultFileScenario is one day's export of about 150,000 lines.
func DefaultFileScenario() FileScenario {
	return FileScenario{
		Lines:     150_000,
		Day:       time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC),
		DayBefore: 10_000,
		Broken:    1_000,
		Seed:      20261122,
	}
}

// FileMeasurement is what ingesting one export did, counted at every port
// of ingest.Service.
type FileMeasurement struct {
	Lines       int64 `json:"lines"`
	Bytes       int64 `json:"bytes"`
	Loaded      int64 `json:"loaded"`
	Quarantined int64 `json:"quarantined"`
	Ledger      Ops   `json:"ledger"` // the file's Claim and Finish
	// Object store calls: generations opened (each one Cloud Storage
	// read, Class B) and objects created (quarantine; Class A), with the
	// quarantine's size.
	ObjectOpens     int64 `json:"object_opens"`
	ObjectCreates   int64 `json:"object_creates"`
	QuarantineBytes int64 `json:"quarantine_bytes"`
	// Warehouse calls: Load calls (one BigQuery load job each), the rows
	// they appended and their logical size; RefreshDaily dates (one query
	// job each) and the logical bytes of the columns those queries read
	// from the dates' rows.
	Loads            int64 `json:"loads"`
	LoadedBytes      int64 `json:"loaded_bytes"`
	RefreshJobs      int64 `json:"refresh_jobs"`
	RefreshScanBytes int64 `json:"refresh_scan_bytes"`
}

// MeasureFile ingests one generated export through the real ingest.Service,
// with the real ledger over a CountingStore on a boltstore file in dir, and
// counting stand-ins for Cloud Storage and BigQuery.
func MeasureFile(ctx context.Context, dir string, fs FileScenario) (FileMeasurement, error) {
	data := ExportFile(fs)
	svc, store, objs, wh, err := newFileRig(dir)
	if err != nil {
		return FileMeasurement{}, err
	}
	defer store.close()
	store.SetPhase(PhaseLedger)
	obj := objs.put("alpinashop-catalogo", "exportaciones/"+fs.Day.Format("2006/01/02")+"/lineas_pedido.csv", data, "")
	rec, err := svc.Ingest(ctx, obj)
	if err != nil {
		return FileMeasurement{}, fmt.Errorf("measure file: %w", err)
	}
	if rec.State != ledger.Done {
		return FileMeasurement{}, fmt.Errorf("measure file: ingest ended %s: %s", rec.State, rec.Reason)
	}
	objs.mu.Lock()
	defer objs.mu.Unlock()
	wh.mu.Lock()
	defer wh.mu.Unlock()
	return FileMeasurement{
		Lines:            rec.Counts.Read,
		Bytes:            int64(len(data)),
		Loaded:           rec.Counts.Loaded,
		Quarantined:      rec.Counts.Quarantined,
		Ledger:           store.Ops(PhaseLedger),
		ObjectOpens:      objs.opens,
		ObjectCreates:    objs.creates,
		QuarantineBytes:  objs.written,
		Loads:            wh.loads,
		LoadedBytes:      wh.loadedBytes,
		RefreshJobs:      wh.refreshJobs,
		RefreshScanBytes: wh.refreshScan,
	}, nil
}

// fileStore is a CountingStore with the boltstore under it.
type fileStore struct {
	*CountingStore
	bolt *boltstore.Store
}

func (s fileStore) close() { s.bolt.Close() }

func newFileRig(dir string) (*ingest.Service, fileStore, *countingObjects, *countingWarehouse, error) {
	bs, err := boltstore.Open(filepath.Join(dir, "ledger.db"))
	if err != nil {
		return nil, fileStore{}, nil, nil, fmt.Errorf("measure file: %w", err)
	}
	store := fileStore{CountingStore: NewCountingStore(bs), bolt: bs}
	l, err := ledger.New(store, ledger.Options{})
	if err != nil {
		bs.Close()
		return nil, fileStore{}, nil, nil, err
	}
	feeds, err := contract.Default()
	if err != nil {
		bs.Close()
		return nil, fileStore{}, nil, nil, err
	}
	objs := &countingObjects{files: map[string][]byte{}}
	wh := &countingWarehouse{scan: map[int32]int64{}}
	svc, err := ingest.New(objs, l, wh, feeds, ingest.Config{QuarantineBucket: "alpinashop-catalogo", QuarantinePrefix: "cuarentena/"},
		func() time.Time { return time.Date(2026, 11, 23, 3, 0, 0, 0, time.UTC) }, slog.New(slog.DiscardHandler))
	if err != nil {
		bs.Close()
		return nil, fileStore{}, nil, nil, err
	}
	return svc, store, objs, wh, nil
}

// ExportFile renders an export as the Spanish ERP writes it: CRLF,
// quoted decimal-comma prices, several lines per order.
func ExportFile(fs FileScenario) []byte {
	rng := rand.New(rand.NewPCG(fs.Seed, 2))
	var b bytes.Buffer
	b.WriteString("pedido_id,linea,fecha,sku,cantidad,precio_unitario,cliente_id,pais\r\n")
	orderNo, line := 100_000, 0
	day := fs.Day.Format(time.DateOnly)
	before := fs.Day.AddDate(0, 0, -1).Format(time.DateOnly)
	countries := defaultCountries()[:8] // the ERP's file: mostly the big markets
	for range fs.Lines {
		if line == 0 || rng.IntN(3) == 0 {
			orderNo++
			line = 0
		}
		line++
		date := day
		if rng.IntN(1_000_000) < int(fs.DayBefore) {
			date = before
		}
		if rng.IntN(1_000_000) < int(fs.Broken) {
			date = "31/02/2026" // not a date: quarantined
		}
		c := countries[rng.IntN(len(countries))].Code
		fmt.Fprintf(&b, "P%07d,%d,%s,%s,%d,\"%d,%02d\",C%05d,%s\r\n",
			orderNo, line, date, fileSKUs[rng.IntN(len(fileSKUs))], 1+rng.IntN(4),
			5+rng.IntN(300), rng.IntN(100), rng.IntN(50_000), c)
	}
	return b.Bytes()
}

// fileSKUs are the SKUs of the generated export.
var fileSKUs = []string{"MOCH-40L-AZ", "MOCH-40L-NG", "BAST-TREK-AL", "GUANT-GTX-M", "SACO-DORMIR-5",
	"CUERDA-60M", "GORRO-LANA", "CHAQ-PLUMA-L", "BOTA-TREK-42", "FRONTAL-400"}

// countingObjects is an in-memory ingest.Objects that counts its calls.
type countingObjects struct {
	mu      sync.Mutex
	files   map[string][]byte
	gen     int64
	opens   int64
	creates int64
	written int64
}

var _ ingest.Objects = (*countingObjects)(nil)

// put stores a new generation of name. The MD5 it reports is the content's,
// salted with salt: a benchmark ingests the same bytes as distinct files.
func (o *countingObjects) put(bucket, name string, data []byte, salt string) ingest.Object {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.gen++
	o.files[bucket+"/"+name+"#"+strconv.FormatInt(o.gen, 10)] = data
	sum := md5.Sum(append([]byte(salt), data...))
	return ingest.Object{Bucket: bucket, Name: name, Generation: o.gen, MD5: base64.StdEncoding.EncodeToString(sum[:]), Size: int64(len(data))}
}

func (o *countingObjects) Open(_ context.Context, bucket, name string, generation int64) (io.ReadCloser, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.opens++
	data, ok := o.files[bucket+"/"+name+"#"+strconv.FormatInt(generation, 10)]
	if !ok {
		return nil, fmt.Errorf("open gs://%s/%s#%d: %w", bucket, name, generation, objects.ErrNotFound)
	}
	return io.NopCloser(bytes.NewReader(data)), nil
}

func (o *countingObjects) Create(_ context.Context, bucket, name, _ string, _ map[string]string) objects.Writer {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.creates++
	return &countingWriter{o: o, attrs: objects.Attrs{Bucket: bucket, Name: name}}
}

type countingWriter struct {
	o     *countingObjects
	n     int64
	attrs objects.Attrs
}

func (w *countingWriter) Write(p []byte) (int, error) { w.n += int64(len(p)); return len(p), nil }
func (w *countingWriter) Abort()                      {}
func (w *countingWriter) Attrs() objects.Attrs        { return w.attrs }
func (w *countingWriter) Close() error {
	w.o.mu.Lock()
	defer w.o.mu.Unlock()
	w.o.written += w.n
	w.attrs.Size = w.n
	return nil
}

// countingWarehouse is an ingest.Warehouse that reads every row a Load
// offers, as a load job would, and counts what BigQuery would store and
// scan.
type countingWarehouse struct {
	mu          sync.Mutex
	loads       int64
	loadedBytes int64
	refreshJobs int64
	refreshScan int64
	scan        map[int32]int64 // per date: bytes of the columns a refresh reads
}

var _ ingest.Warehouse = (*countingWarehouse)(nil)

func (w *countingWarehouse) Load(_ context.Context, req warehouse.Load) (warehouse.LoadResult, error) {
	t, err := warehouse.Lookup(req.Table)
	if err != nil {
		return warehouse.LoadResult{}, err
	}
	var refCols []string
	dateCol := -1
	for _, a := range warehouse.Aggregates() {
		if a.Source != req.Table {
			continue
		}
		dateCol = t.Column(a.DateColumn)
		refCols = aggregateColumns(a)
	}
	var rows, size int64
	scan := map[int32]int64{}
	for req.Rows.Next() {
		r := req.Rows.Row()
		rows++
		size += LogicalBytes(t, r)
		if dateCol >= 0 {
			scan[r[dateCol].Days] += logicalBytesOf(t, r, refCols)
		}
	}
	if err := req.Rows.Err(); err != nil {
		return warehouse.LoadResult{}, err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.loads++
	w.loadedBytes += size
	for d, n := range scan {
		w.scan[d] += n
	}
	return warehouse.LoadResult{Rows: rows}, nil
}

func (w *countingWarehouse) RefreshDaily(_ context.Context, _ string, dates []int32) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	seen := map[int32]bool{}
	for _, d := range dates {
		if seen[d] {
			continue
		}
		seen[d] = true
		w.refreshJobs++
		w.refreshScan += w.scan[d]
	}
	return nil
}

// aggregateColumns are the source columns an aggregate's refresh query
// reads: the date, the keys, the measured columns and the lineage columns
// of the newest-generation rule.
func aggregateColumns(a warehouse.Aggregate) []string {
	cols := []string{a.DateColumn}
	cols = append(cols, a.Keys...)
	for _, m := range a.Measures {
		if m.Source != "" {
			cols = append(cols, m.Source)
		}
	}
	return append(cols, a.ObjectColumn, a.GenerationColumn)
}
