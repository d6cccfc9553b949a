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

	"github.com/alpinashop/alpipe/internal/warehouse"
	"github.com/alpinashop/alpipe/internal/warehouse/warehousetest"
)

// TestConcurrentLoadsFitTheMemoryLimit: four drops of 260,000 rows at
// once, each refreshed after as ingest does, under the default memory
// limit (without load slots, three failed out of memory).
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
		wg.Go(func() {
			obj := fmt.Sprintf("exportaciones/2026/03/14/pedidos-%d.csv", i)
			_, err := w.Load(ctx, warehouse.Load{ID: "load-" + strconv.Itoa(i), Table: warehouse.LineasPedido,
				Rows: warehousetest.OrderLines(rowsPerFile, obj, 1)})
			if err == nil {
				err = w.RefreshDaily(ctx, warehouse.VentasDiariasSKU, []int32{today - 1, today - 2, today - 3})
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("drop %d: %v", i, err)
		}
	}
	checkQuery(t, w, "SELECT COUNT(*) FROM lineas_pedido",
		[][]string{{strconv.Itoa(files * rowsPerFile)}})
	if left, _ := filepath.Glob(filepath.Join(tmp, "alpipe-load-*.csv")); len(left) > 0 {
		t.Errorf("spool files left behind: %v", left)
	}
}

func TestLoadSlots(t *testing.T) {
	tests := []struct {
		name          string
		limit         int64
		threads, want int
	}{
		{"default 64MB on two cores", 61 << 20, 1, 2},
		{"tiny limit still loads", 8 << 20, 1, 1},
		{"more memory than threads", 4 << 30, 3, 4},
		{"more threads than memory", 100 << 20, 15, 4},
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
		name, in string
		want     int64
	}{
		{"MiB with a fraction", "61.0 MiB", 61 << 20},
		{"GiB", "1.5 GiB", 3 << 29},
		{"bytes", "512 bytes", 512},
		{"decimal unit", "64 MB", 64_000_000},
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

// TestLoadWaitsForASlot: a Load queues while the slots are taken, and
// gives up with its context.
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

// TestRelativeTempDir opens with a relative temp folder, as serve does,
// then changes folder: spilling must still work and Close not abort.
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
