package cost

import (
	"encoding/json"
	"flag"
	"math/big"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/aggregation"
)

var update = flag.Bool("update", false, "measure again and rewrite recorded.json and docs/cost.md")

// measureVariants is a flag rather than the default of a run without -short:
// with the SKU aggregation the variants take longer than the suite's
// timeout allows a package.
var measureVariants = flag.Bool("variants", false, "measure the variants again and compare them with recorded.json")

// docPath is docs/cost.md from this package's directory.
var docPath = filepath.Join("..", "..", "docs", "cost.md")

// bound is a measured ratio and the range it must stay in, with the reason.
type bound struct {
	name   string
	n, d   int64
	lo, hi *big.Rat
	why    string
}

func checkBounds(t *testing.T, bs []bound) {
	t.Helper()
	for _, b := range bs {
		got := frac(b.n, b.d)
		if got.Cmp(b.lo) < 0 || got.Cmp(b.hi) > 0 {
			t.Errorf("%s = %s, want within [%s, %s]: %s", b.name, got.FloatString(3), b.lo.FloatString(2), b.hi.FloatString(2), b.why)
		}
	}
}

// streamBounds are the ranges the stream's counts must stay in, from the
// document layout (stream's package comment) and the scenario's
// aggregations.
func streamBounds(sc Scenario, m Measurement) []bound {
	var tickRows, tickCalls int64
	for _, a := range m.TickAppends {
		tickRows += a.Rows
		tickCalls += a.Calls
	}
	cells := orderCells(sc, m)
	return []bound{
		{"reads per (window, key) an order adds to", m.OrderOps.BilledReads(), cells, ri(2), big.NewRat(13, 5),
			"per (window, key) a delta and its cell (the headroom check); per order every aggregation's watermark and the dedup record; a late order (Ld = 0) reads its cell and every delta of it"},
		{"writes per (window, key) an order adds to", m.OrderOps.Writes, cells, ri(1), big.NewRat(5, 4),
			"per (window, key) its delta; per order its one dedup record; late corrections and dead letters add a few"},
		{"deletes per order", m.OrderOps.Deletes, m.Orders, ri(0), big.NewRat(3, 20),
			"an order deletes only the deltas a late correction folds and the outbox rows of its late panes, too-late drops or dead letter"},
		{"TTL deletes per order", m.OrderOps.TTLDeletes, m.Orders, big.NewRat(95, 100), big.NewRat(105, 100),
			"one dedup record per message, for every aggregation at once, left to the TTL policy"},
		{"queries per order", m.OrderOps.Lists, m.Orders, ri(0), ri(0), "Handle never lists a collection"},
		{"open (window, pais)s per tick", m.OpenWindows["ventas_hora_pais"], m.Ticks, ri(85), ri(125),
			"30 countries x (the current hour + the 2 hours of allowed lateness + the hour waiting for W to pass end + L)"},
		{"open (window, sku)s per tick", m.OpenWindows["ventas_sku_hora_movil"], m.Ticks, ri(11_000), ri(17_000),
			"about 1,225 SKUs sell in an hour; a window is open from its start until W = now - D passes end + L: 13 windows started every 15 minutes"},
		{"reads per open window per tick", m.TickOps.BilledReads(), openWindows(m), big.NewRat(1, 20), ri(2),
			"a tick reads a constant (lease, outboxes, deltas, agenda, watermark) and a few documents per cell that changed or has a timer due, never the open state: about 230 (window, sku)s and 30 (window, pais)s change every minute, and every 15 minutes a SKU window's ~1,225 cells get their ON_TIME pane and another's expire (reading a fresh listing of their deltas, 16 cells a transaction)"},
		{"writes per tick", m.TickOps.Writes, m.Ticks, ri(2), ri(900),
			"the lease and the watermark of each aggregation, then per emitting cell its state and an outbox row"},
		{"insertAll calls per tick", tickCalls, m.Ticks, ri(0), ri(4), "one append per table with rows, 500 rows at most each"},
		{"rows streamed per tick", tickRows, m.Ticks, ri(0), ri(400), "at most one pane per open (window, key) that changed or reached its ON_TIME round"},
	}
}

// orderCells is the (window, key)s the measured orders add to, counted
// from the scenario: per valid order, each aggregation's windows per
// element times its elements (one, or one per line for the key sku, the
// lines of an order having distinct SKUs).
func orderCells(sc Scenario, m Measurement) int64 {
	var n int64
	for _, sp := range sc.Specs {
		per := int64(sp.WindowSize / sp.PeriodOrSize())
		if sp.KeyField == aggregation.KeySKU {
			n += per * m.Lines
		} else {
			n += per * (m.Orders - m.Invalid)
		}
	}
	return n
}

func openWindows(m Measurement) int64 {
	var n int64
	for _, v := range m.OpenWindows {
		n += v
	}
	return n
}

func fileBounds(f FileMeasurement) []bound {
	return []bound{
		{"ledger reads per file", f.Ledger.BilledReads(), 1, ri(7), ri(7), "Claim reads the record, the MD5 index and the object's current generation; the refresh lock is read to take and to release it; Finish reads the record and the current generation"},
		{"ledger writes per file", f.Ledger.Writes, 1, ri(5), ri(5), "Claim writes the index and the record; the refresh lock is written once (released by a delete); Finish writes the record and the current generation"},
		{"load jobs per file", f.Loads, 1, ri(1), ri(1), "one atomic load per file"},
		{"refresh jobs per file", f.RefreshJobs, 1, ri(1), ri(2), "one per date the file touches: the day, and the day before for late lines"},
		{"quarantined share", f.Quarantined, f.Lines, ri(0), big.NewRat(1, 500), "broken lines are 0.1% of the export"},
		{"logical bytes per loaded line", f.LoadedBytes, f.Loaded, ri(150), ri(250), "13 columns, the lineage strings the largest"},
	}
}

// TestMeasure measures the operation counts of the real stream processor
// and ingest path, prints them, checks them against the bounds above and
// against recorded.json. With -update it also runs the CPU benchmarks and
// rewrites recorded.json and docs/cost.md.
func TestMeasure(t *testing.T) {
	sc, err := DefaultScenario()
	if err != nil {
		t.Fatal(err)
	}
	m, err := Measure(t.Context(), fastDir(t), sc)
	if err != nil {
		t.Fatal(err)
	}
	f, err := MeasureFile(t.Context(), fastDir(t), DefaultFileScenario())
	if err != nil {
		t.Fatal(err)
	}
	out, _ := json.MarshalIndent(struct {
		Stream Measurement     `json:"stream"`
		File   FileMeasurement `json:"file"`
	}{m, f}, "", "  ")
	t.Logf("measured over %v after %v of warm-up (extrapolated linearly by orders, ticks and files):\n%s", sc.Measured, sc.WarmUp, out)
	checkBounds(t, streamBounds(sc, m))
	checkBounds(t, fileBounds(f))
	for _, table := range sinkTables(sc.Specs) {
		if r := m.OrderAppends[table].Repeats + m.TickAppends[table].Repeats; r != 0 {
			t.Errorf("%d rows of %s appended twice: the outbox should append each row once when the sink never fails", r, table)
		}
	}

	variants := map[string]Measurement{}
	if !*update && !*measureVariants {
		t.Log("variants not measured: run with -variants (about 25 minutes: the campaign day simulates 500,000 orders a day through both aggregations)")
	} else {
		for _, v := range Variants() {
			if v.Scenario == nil {
				continue
			}
			vs := v.Scenario(sc)
			vm, err := Measure(t.Context(), fastDir(t), vs)
			if err != nil {
				t.Fatalf("variant %s: %v", v.Name, err)
			}
			variants[v.Name] = vm
			t.Logf("variant %s: %s reads, %s writes per order; %s reads, %s writes per tick", v.Name,
				Num(frac(vm.OrderOps.BilledReads(), vm.Orders), 2), Num(frac(vm.OrderOps.Writes, vm.Orders), 2),
				Num(frac(vm.TickOps.BilledReads(), vm.Ticks), 1), Num(frac(vm.TickOps.Writes, vm.Ticks), 1))
		}
	}

	if *update {
		cpu := measureCPU(t)
		checkCPU(t, cpu)
		rec := Recorded{Scenario: sc, Stream: m, FileScenario: DefaultFileScenario(), File: f, Variants: variants, CPU: cpu}
		b, err := json.MarshalIndent(rec, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(RecordedFile, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		rewriteDoc(t, rec)
		return
	}
	rec := readRecorded(t)
	if diff := cmp.Diff(rec.Stream, m); diff != "" {
		t.Errorf("stream counts differ from %s (-recorded +measured); if the change is intended, run go test ./tools/cost/ -run TestMeasure -update:\n%s", RecordedFile, diff)
	}
	if diff := cmp.Diff(rec.File, f); diff != "" {
		t.Errorf("file counts differ from %s (-recorded +measured); if the change is intended, run go test ./tools/cost/ -run TestMeasure -update:\n%s", RecordedFile, diff)
	}
	for name, vm := range variants {
		if diff := cmp.Diff(rec.Variants[name], vm); diff != "" {
			t.Errorf("variant %s differs from %s (-recorded +measured):\n%s", name, RecordedFile, diff)
		}
	}
	checkCPU(t, rec.CPU)
}

// checkCPU holds the CPU figures to bounds far above what they are: a
// figure past them means the code changed its order of magnitude.
func checkCPU(t *testing.T, c CPU) {
	t.Helper()
	for _, b := range []struct {
		name   string
		got    int64
		lo, hi int64
	}{
		{"CPU per order", c.Order.Nanos, 1_000, 2_000_000},
		{"CPU per tick", c.Tick.Nanos, 10_000, 200_000_000},
		{"CPU per file", c.File.Nanos, 10_000_000, 5_000_000_000},
		{"CPU per encoded line", c.Encode.Nanos, 10, 10_000},
	} {
		if b.got < b.lo || b.got > b.hi {
			t.Errorf("%s = %d ns, want within [%d, %d]", b.name, b.got, b.lo, b.hi)
		}
	}
}

func readRecorded(t *testing.T) Recorded {
	t.Helper()
	b, err := os.ReadFile(RecordedFile)
	if err != nil {
		t.Fatal(err)
	}
	r, err := ParseRecorded(b)
	if err != nil {
		t.Fatalf("%s: %v (run go test ./tools/cost/ -run TestMeasure -update)", RecordedFile, err)
	}
	return r
}

// rewriteDoc fills docs/cost.md's generated blocks from rec.
func rewriteDoc(t *testing.T, rec Recorded) {
	t.Helper()
	blocks, err := Blocks(rec)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(docPath)
	if err != nil {
		t.Fatal(err)
	}
	out, err := FillDoc(string(doc), blocks)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(docPath, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
}
