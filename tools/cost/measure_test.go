package cost

import (
	"encoding/json"
	"flag"
	"math/big"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
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

// streamBounds are the ranges the stream's counts must stay in, from what
// layout 3 does (internal/stream: order.go, fold.go) and the scenario's
// aggregations.
func streamBounds(sc Scenario, m Measurement) []bound {
	var tickRows, tickCalls int64
	for _, a := range m.TickAppends {
		tickRows += a.Rows
		tickCalls += a.Calls
	}
	valid := m.Orders - m.Invalid
	aggs := int64(len(sc.Specs))
	return []bound{
		{"reads per order", m.OrderOps.BilledReads(), m.Orders, ri(2), big.NewRat(5, 2),
			"stream/control and the order's dedup record, whatever the windows and keys it counts in; a late order (Ld = 0) also reads each aggregation's fold document and its windows' state documents (about 1% of the orders); an invalid message reads its dead-letter mark"},
		{"writes per order", m.OrderOps.Writes, m.Orders, ri(1), big.NewRat(5, 4),
			"its one dedup record; a late order (Ld = 0) rewrites its windows' state documents and an outbox document per pane, a too-late window or an invalid message an outbox document"},
		{"deletes per order", m.OrderOps.Deletes, m.Orders, ri(0), big.NewRat(3, 20),
			"an order deletes only the outbox documents of its own late panes, too-late drops or dead letter once appended"},
		{"TTL deletes per order", m.OrderOps.TTLDeletes, m.Orders, big.NewRat(95, 100), big.NewRat(105, 100),
			"one dedup record per message, for every aggregation at once, left to the TTL policy"},
		{"queries per order", m.OrderOps.Lists, m.Orders, ri(0), ri(0), "Handle never lists a collection"},
		{"open windows of ventas_hora_pais per tick", m.OpenWindows["ventas_hora_pais"], m.Ticks, ri(3), ri(5),
			"a fixed hour is open from its first order until W = now - D passes end + L: 3h10m, so 3 or 4 windows"},
		{"open windows of ventas_sku_hora_movil per tick", m.OpenWindows["ventas_sku_hora_movil"], m.Ticks, ri(11), ri(15),
			"a sliding window starts every 15 minutes and is open 3h10m, as a fixed one: about 13"},
		{"query results per record", m.TickOps.ListReads, valid, ri(1), big.NewRat(3, 2),
			"every valid message's dedup record is listed once, when its generation is final; besides, per tick the open generation is asked for one record (limit 1), and the dead letters' outbox, each aggregation's outbox and the generation the advance closes are queries finding one document or none (about 5 or 6 reads a tick, against about 35 records)"},
		{"reads per tick besides query results", m.TickOps.Reads, m.Ticks, ri(3 + 6*aggs), ri(3 + 6*aggs + 40),
			"stream/control 3 times (read, close, advance), per aggregation the lease twice, the fold state (2) and the fold transaction's fold document and stream/control (2); then the state documents of each window the fold visits (touched by the records or due): a window of ventas_hora_pais and 4 or 5 of ventas_sku_hora_movil, of up to 4 documents each as a SKU window's keys grow past 256 KiB"},
		{"writes per tick", m.TickOps.Writes, m.Ticks, ri(2 * aggs), ri(80),
			"per aggregation the lease and its fold document, stream/control to close the generation and to advance W, the state documents of each visited window that changed and an outbox document per 400 panes"},
		{"deletes per tick", m.TickOps.Deletes, m.Ticks, ri(aggs), ri(20),
			"per aggregation the lease's release and the outbox documents appended; an expired window's state documents (a SKU window every 15 minutes, a country hour every hour)"},
		{"insertAll calls per tick", tickCalls, m.Ticks, ri(0), ri(5), "one append per table with rows, 200 rows at most each (stream's flushBatch)"},
		{"rows streamed per tick", tickRows, m.Ticks, ri(0), ri(400),
			"an EARLY pane per (window, key) that changed, a minute later, and every 15 minutes a SKU window's ON_TIME round of one pane per key"},
	}
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
		t.Log("variants not measured: run with -variants (about 10 minutes: the campaign day simulates 500,000 orders a day through both aggregations)")
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
