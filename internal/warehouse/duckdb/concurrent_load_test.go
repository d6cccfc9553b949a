package duckdb

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/warehouse"
	"github.com/alpinashop/alpipe/internal/warehouse/warehousetest"
)

// TestConcurrentLoadsFitTheMemoryLimit is four drops of about 260,000
// rows at once, each followed by its daily refresh as ingest does, under
// the default memory limit: without the load slots three of the four
// failed with "Out of Memory Error (61.0 MiB/61.0 MiB used)".
func TestConcurrentLoadsFitTheMemoryLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: loads a million rows (about 20 s)")
	}
	const files, rowsPerFile = 4, 260_000
	tmp := t.TempDir()
	w := open(t, filepath.Join(t.TempDir(), "wh.duckdb"), Options{TempDir: tmp})
	ctx := context.Background()
	today := warehouse.DateOf(time.Date(2026, 3, 15, 0, 0, 0, 0, time.UTC))
	var wg sync.WaitGroup
	errs := make([]error, files)
	for i := range files {
		wg.Add(1)
		go func() {
			defer wg.Done()
			obj := fmt.Sprintf("exportaciones/2026/03/14/pedidos-%d.csv", i)
			_, err := w.Load(ctx, warehouse.Load{ID: "load-" + strconv.Itoa(i), Table: warehouse.LineasPedido,
				Rows: warehousetest.OrderLines(rowsPerFile, obj, 1)})
			if err == nil {
				err = w.RefreshDaily(ctx, warehouse.VentasDiariasSKU, []int32{today - 1, today - 2, today - 3})
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("drop %d: %v", i, err)
		}
	}
	res, err := w.Query(ctx, "SELECT COUNT(*) FROM lineas_pedido")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([][]string{{strconv.Itoa(files * rowsPerFile)}}, res.Rows); diff != "" {
		t.Errorf("rows loaded (-want +got):\n%s", diff)
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "alpipe-load-*.csv")); len(left) > 0 {
		t.Errorf("spool files left behind: %v", left)
	}
}

func TestLoadSlots(t *testing.T) {
	tests := []struct {
		name    string
		limit   int64
		threads int
		want    int
	}{
		{name: "default 64MB on two cores", limit: 61 << 20, threads: 1, want: 2},
		{name: "tiny limit still loads", limit: 8 << 20, threads: 1, want: 1},
		{name: "more memory than threads", limit: 4 << 30, threads: 3, want: 4},
		{name: "more threads than memory", limit: 100 << 20, threads: 15, want: 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := loadSlots(tt.limit, tt.threads); got != tt.want {
				t.Errorf("loadSlots(%d, %d) = %d, want %d", tt.limit, tt.threads, got, tt.want)
			}
		})
	}
}

func TestParseSize(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want int64
	}{
		{name: "MiB with a fraction", in: "61.0 MiB", want: 61 << 20},
		{name: "GiB", in: "1.5 GiB", want: 3 << 29},
		{name: "bytes", in: "512 bytes", want: 512},
		{name: "decimal unit", in: "64 MB", want: 64_000_000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseSize(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("parseSize(%q) = %d, want %d", tt.in, got, tt.want)
			}
		})
	}
	for _, bad := range []string{"lots", "12", "3 parsecs"} {
		if _, err := parseSize(bad); err == nil {
			t.Errorf("parseSize(%q) succeeded, want an error", bad)
		}
	}
}

// TestLoadWaitsForASlot checks that a Load queues while the slots are
// taken, and gives up with its context.
func TestLoadWaitsForASlot(t *testing.T) {
	w := open(t, "", Options{MaxLoads: 1})
	release, err := w.acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err = w.Load(ctx, warehouse.Load{ID: "waits", Table: warehouse.LineasPedido, Rows: warehousetest.OrderLines(10, "x.csv", 1)})
	if err == nil {
		t.Fatal("Load ran although the only slot was taken")
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Load error %v, want the context's deadline", err)
	}
}

// TestRelativeTempDir opens with a relative temp folder, as serve does
// with its default data folder, and then the process changes folder: DuckDB
// resolves a relative temp_directory anew on each use and found it outside
// allowed_directories (see confine), which are fixed at Open. Spilling
// failed with a permission error, and Close aborted the process.
func TestRelativeTempDir(t *testing.T) {
	t.Chdir(t.TempDir())
	w, err := Open("wh.duckdb", Options{TempDir: filepath.Join(".local", "tmp"), MemoryLimit: "16MB"})
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	// A sort larger than the memory limit spills to the temp folder.
	var n int64
	if err := w.db.QueryRow("SELECT count(*) FROM (SELECT md5(range::VARCHAR) AS y FROM range(500000) ORDER BY y)").Scan(&n); err != nil {
		t.Errorf("spilling sort: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
}
