// Command cost prints docs/cost.md, alpipe's monthly bill at AlpinaShop's
// volume: the operation counts of tools/cost/ops (the ones internal/stream's
// tests assert) and the figures measured once below, times the price table
// in prices.go. It measures nothing, so the default test run does not
// re-measure the bill; TestDocIsCurrent holds docs/cost.md to its output.
//
//	go run ./tools/cost > docs/cost.md
package main

import (
	"fmt"
	"os"
	"time"

	"github.com/alpinashop/alpipe/internal/dashboard"
	"github.com/alpinashop/alpipe/internal/stream"
	"github.com/alpinashop/alpipe/tools/cost/ops"
)

func main() {
	if _, err := os.Stdout.WriteString(doc()); err != nil {
		fmt.Fprintf(os.Stderr, "cost: write docs/cost.md: %v\n", err)
		os.Exit(1)
	}
}

// The volume of AlpinaShop's documents and the settings of the code.
const (
	ordersPerDay   = 50_000
	redeliveryPPM  = 2_000 // Pub/Sub pushes 0.2% of the orders twice
	aggregations   = 3     // sesiones_cliente, ventas_hora_pais, ventas_sku_hora_movil
	filesPerDay    = 1
	linesPerFile   = 150_000
	bytesPerFile   = 8_600_000
	days           = 30 // a month
	retainedMonths = 12 // stored data is priced as it stands after a year
	dedupDays      = 8  // 7 days of retention, up to one more until the TTL sweep
)

// hour is what the simulation this command replaced measured in an hour of
// traffic at 50,000 orders a day (2,083 orders of 2.3 lines, SKUs drawn by
// Zipf's law from 3,000, both aggregations) beyond what ops counts: what
// grows with the windows and keys that change rather than with the orders.
type hour struct {
	source string
	// Window state documents the ticks' folds read and wrote, and their
	// outbox documents (each one insertAll and one delete).
	stateReads, stateWrites, outbox int64
	// Rows streamed to the panes tables and their logical bytes.
	countryPanes, countryBytes, skuPanes, skuBytes int64
}

var (
	everyMinute = hour{source: "late-delay-1m (late corrections folded by the tick)",
		stateReads: 654, stateWrites: 598, outbox: 134,
		countryPanes: 524, countryBytes: 60_307, skuPanes: 16_969, skuBytes: 2_167_247}
	every5Minutes = hour{source: "tick-5min (Ld = 0 there: its 13 late orders' own state work is left out)",
		stateReads: 177, stateWrites: 107, outbox: 61,
		countryPanes: 326, countryBytes: 37_540, skuPanes: 15_126, skuBytes: 1_931_975}
)

// sesiones_cliente's own state was not in the measured hour: it is
// modelled, at its worst, as the doc's "Not measured but modelled" says
// (D + G + L from sesiones_cliente.json).
const (
	sessionLife  = 10*time.Minute + 30*time.Minute + 2*time.Hour
	sessionBytes = 222 // TestSessionBytes (internal/stream), 2026-12-03
	sessionPanes = 2
	// sessionTickCPU is what decoding, folding and encoding those parts
	// adds to a tick: BenchmarkSessionTick (internal/stream), 5600-open
	// minus 100-open, 2026-12-03, linux/amd64.
	sessionTickCPU = (66_290 - 12_400) * time.Microsecond
)

// sessionParts are the part documents of sesiones_cliente's open sessions:
// they double while the average part would pass 90% of the limit, for the
// hash's unevenness.
func sessionParts() int64 {
	state := int64(ordersPerDay*sessionLife/(24*time.Hour)) * sessionBytes
	parts := int64(1)
	for state/parts > stream.DefaultSessionPartBytes*9/10 {
		parts *= 2
	}
	return parts
}

// Measured once with the hour (git show 7f167a3:tools/cost/recorded.json).
const (
	discardRows, discardBytes = 41, 19_978 // pedidos_descartados rows an hour
	messageBytes              = 277        // an order's data and attributes
	dedupRecordBytes          = 1_901
	// The views' bytes per pane (the dashboard's queries read these columns).
	countryViewBytes, countryViewPanes = 221_866, 2_608
	skuViewBytes, skuViewPanes         = 8_122_965, 83_160
	// An export of 150,000 lines through the real ingest: rows loaded and
	// their logical bytes, the quarantine file, and two refresh queries of
	// about 9 MB each (billed the 10 MB minimum).
	loadedLines, loadedBytes, quarantineBytes = 149_834, 27_613_909, 20_150
	refreshQueries                            = 2
	// CPU (getrusage around Handle, Tick, Ingest; 2026-12-02, linux/amd64)
	// and the staging encoder's per line (2026-11-29).
	orderCPU, tickCPU, fileCPU, encodeCPUPerLine = 839_531 * time.Nanosecond, 78_474_111 * time.Nanosecond, 79_399_142 * time.Nanosecond, 509 * time.Nanosecond
)

// ledger is an export's Claim and Finish in the ingest ledger, measured.
var ledger = ops.Ops{Transactions: 4, Reads: 7, Writes: 5, Deletes: 1, RoundTrips: 12}

// Assumed: waits a request spends besides its CPU, the instance, the
// per-document overhead Firestore stores, the bytes billed at least.
const (
	firestoreRTT    = 10 * time.Millisecond
	insertAllWait   = 100 * time.Millisecond
	fileWaits       = 27 * time.Second // transfers 2 s, load job 20 s, refresh queries 5 s
	granularity     = 100 * time.Millisecond
	memoryMiB       = 512 // and 1 vCPU: terraform/'s services (main.tf, run.tf)
	docOverhead     = 100
	pubsubMinBytes  = 1_000
	minRowBytes     = 1 * kib  // streaming inserts
	minQueryBytes   = 10 * mib // per table a query reads
	classAPerFile   = 3        // the ERP's upload, the staged NDJSON, the quarantine file
	classBPerFile   = 2        // the ingest's read, the load job's
	dataflowWorkers = 2        // n1-standard-1: 1 vCPU, 3.75 GB
)

// scenario is one bill's inputs.
type scenario struct {
	change  string
	tick    time.Duration
	hour    hour
	refresh time.Duration // the dashboard page's period
}

var scenarios = []scenario{
	{change: "as above", tick: time.Minute, hour: everyMinute, refresh: dashboard.DefaultRefresh},
	// The window state a fold touches is the 1-minute hour's: a 30-second
	// tick folds the same orders in two halves, so only the per-tick
	// reads and writes double; Cloud Tasks' 43,200 follow-ups a month are
	// inside its free million operations.
	{change: "a tick every 30 seconds (Scheduler plus one Cloud Tasks follow-up; window state as measured at 1 minute)", tick: 30 * time.Second, hour: everyMinute, refresh: dashboard.DefaultRefresh},
	{change: "a tick every 5 minutes (the dashboard up to 5 minutes behind)", tick: 5 * time.Minute, hour: every5Minutes, refresh: dashboard.DefaultRefresh},
	{change: fmt.Sprintf("the dashboard page refreshed every 2 minutes instead of %d", int(dashboard.DefaultRefresh.Minutes())), tick: time.Minute, hour: everyMinute, refresh: 2 * time.Minute},
}

// day are a scenario's Firestore operations a day: the orders', the
// ticks', the discards' (an outbox document each, written and deleted)
// and the ledger's.
func (s scenario) day() (orders, ticks, all ops.Ops) {
	h := s.hour
	orders = ops.Order.Times(ordersPerDay)
	sessionDocs := s.ticksPerDay() * sessionParts()
	ticks = ops.Ticks(s.ticksPerDay(), aggregations, ordersPerDay, 24*h.stateReads+sessionDocs, 24*h.stateWrites+sessionDocs, 24*h.outbox)
	discards := ops.Ops{Writes: 24 * discardRows, Deletes: 24 * discardRows}
	return orders, ticks, orders.Add(ticks).Add(discards).Add(ledger.Times(filesPerDay))
}

func (s scenario) ticksPerDay() int64 { return int64(24 * time.Hour / s.tick) }

// busy are the milliseconds an order, a tick and a file keep an instance
// billed: CPU plus waits, rounded up to the granularity.
func (s scenario) busy() (order, tick, file int64) {
	_, ticks, _ := s.day()
	n := s.ticksPerDay()
	tickWaits := (time.Duration(ticks.RoundTrips)*firestoreRTT + time.Duration(24*s.hour.outbox)*insertAllWait) / time.Duration(n)
	return billedMs(orderCPU + time.Duration(ops.Order.RoundTrips)*firestoreRTT),
		billedMs(tickCPU + sessionTickCPU + tickWaits),
		billedMs(fileCPU + encodeCPUPerLine*loadedLines + time.Duration(ledger.RoundTrips)*firestoreRTT + fileWaits)
}

func billedMs(d time.Duration) int64 {
	return int64((d+granularity-1)/granularity*granularity) / int64(time.Millisecond)
}

// line is one item of a month's bill; qty and free in p's unit.
type line struct {
	service, item, shown string
	qty, free            int64
	p                    price
}

func (l line) list() int64 { return charge(l.qty, l.p) }
func (l line) cost() int64 { return charge(max(0, l.qty-l.free), l.p) }

// bill is a month at scenario s.
func (s scenario) bill() []line {
	_, _, day := s.day()
	order, tick, file := s.busy()
	deliveries := int64(ordersPerDay * days * (1_000_000 + redeliveryPPM) / 1_000_000)
	ticks, files := s.ticksPerDay()*days, int64(filesPerDay*days)
	busy := deliveries*order + ticks*tick + files*file
	h := s.hour
	panesDay := 24*(h.countryPanes+h.skuPanes+discardRows) + sessionPanes*ordersPerDay
	streamedDay := 24 * (h.countryBytes + h.skuBytes + discardBytes)
	stored := retainedMonths * (files*loadedBytes + days*streamedDay)
	scan := days * int64(24*time.Hour/s.refresh) * dashboardQuery(h)
	queried := files*refreshQueries*minQueryBytes + scan
	firestoreStored := ordersPerDay*dedupDays*(dedupRecordBytes+docOverhead) +
		files*retainedMonths*ledger.Writes*(kib+docOverhead)
	gcsStored := (bytesPerFile + quarantineBytes) * files * retainedMonths
	month := func(perDay, freePerDay int64) (int64, int64) { return perDay * days, min(perDay, freePerDay) * days }
	reads, freeReads := month(day.BilledReads(), freeFirestoreReads)
	writes, freeWrites := month(day.Writes, freeFirestoreWrites)
	deletes, freeDeletes := month(day.Deletes, freeFirestoreDeletes)
	return []line{
		{"Firestore", "document reads", count(reads), reads, freeReads, firestoreRead},
		{"Firestore", "document writes", count(writes), writes, freeWrites, firestoreWrite},
		{"Firestore", "document deletes", count(deletes), deletes, freeDeletes, firestoreDelete},
		{"Firestore", "TTL deletes (dedup records)", count(day.TTLDeletes * days), day.TTLDeletes * days, 0, firestoreDelete},
		{"Firestore", "stored data", gibs(firestoreStored), firestoreStored, freeFirestoreStorage, firestoreStorage},
		{"Cloud Run", "vCPU-seconds", count(busy / 1000), busy, freeRunCPUms, runCPU},
		{"Cloud Run", "GiB-seconds", count(busy * memoryMiB / 1024 / 1000), busy * memoryMiB / 1024, freeRunMemoryms, runMemory},
		{"Cloud Run", "requests", count(deliveries + ticks + files), deliveries + ticks + files, freeRunRequests, runRequests},
		{"Pub/Sub", "publish + push, 1,000 bytes each at least", gibs((ordersPerDay*days + deliveries) * max(messageBytes, pubsubMinBytes)),
			(ordersPerDay*days + deliveries) * max(messageBytes, pubsubMinBytes), freePubSub, pubsub},
		{"BigQuery", "streaming inserts (panes, discards), 1 KB a row at least", count(panesDay*days) + " rows",
			panesDay * days * minRowBytes, 0, bqStreaming},
		{"BigQuery", fmt.Sprintf("storage after %d months", retainedMonths), gibs(stored), stored, freeBQStorage, bqStorage},
		{"BigQuery", "queries: daily refresh + dashboard", gibs(queried), queried, freeBQQuery, bqQuery},
		{"Cloud Storage", fmt.Sprintf("exports and quarantine kept %d months", retainedMonths), gibs(gcsStored), gcsStored, 0, gcsStorage},
		{"Cloud Storage", "Class A operations", count(files * classAPerFile), files * classAPerFile, 0, gcsClassA},
		{"Cloud Storage", "Class B operations", count(files * classBPerFile), files * classBPerFile, 0, gcsClassB},
		{"Cloud Scheduler", "tick job", "1 job", 1, freeSchedulerJobs, scheduler},
	}
}

// dashboardQuery are the bytes one refresh of the page scans: its view
// (ventas_sku_hora_movil's, the one that costs the most) over the
// partitions dashboard.DefaultRange reaches, and the discard summary
// (pedidos_descartados and the ventas_hora_pais view over the same range),
// each table billed at least minQueryBytes.
func dashboardQuery(h hour) int64 {
	d := int64((dashboard.DefaultRange+24*time.Hour-1)/(24*time.Hour)) + 1 // partitions: it starts part-way through a day
	view := max(minQueryBytes, 24*h.skuPanes*d*skuViewBytes/skuViewPanes)
	summary := max(minQueryBytes, 24*discardBytes*d) + max(minQueryBytes, 24*h.countryPanes*d*countryViewBytes/countryViewPanes)
	return view + summary
}

// dataflow is what the always-on workers of the Dataflow design alone
// cost a month (vCPU and 3.75 GB each), in nano-USD.
func dataflow() int64 {
	hours := int64(dataflowWorkers * days * 24)
	return charge(hours, dataflowVCPU) + charge(hours*375/100, dataflowMemory)
}
