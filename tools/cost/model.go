package cost

import (
	"errors"
	"fmt"
	"maps"
	"math/big"
	"slices"
	"time"

	"github.com/alpinashop/alpipe/internal/aggregation"
	"github.com/alpinashop/alpipe/internal/dashboard"
	"github.com/alpinashop/alpipe/internal/numeric"
	"github.com/alpinashop/alpipe/internal/warehouse"
)

// Volume is AlpinaShop's traffic.
type Volume struct {
	OrdersPerDay int64         `json:"orders_per_day"`
	FilesPerDay  int64         `json:"files_per_day"`
	LinesPerFile int64         `json:"lines_per_file"`
	BytesPerFile int64         `json:"bytes_per_file"`
	TickEvery    time.Duration `json:"tick_every"`
	DaysPerMonth int64         `json:"days_per_month"`
	// RetainedMonths: stored data (BigQuery tables, landing files) is
	// priced as it stands after this many months of history.
	RetainedMonths int64 `json:"retained_months"`
}

// DefaultVolume is the volume of the issue: 50,000 orders a day, one export
// of about 150,000 lines (8.6 MB) a day, a tick every minute, 30-day months.
func DefaultVolume() Volume {
	return Volume{
		OrdersPerDay:   50_000,
		FilesPerDay:    1,
		LinesPerFile:   150_000,
		BytesPerFile:   8_600_000,
		TickEvery:      time.Minute,
		DaysPerMonth:   30,
		RetainedMonths: 12,
	}
}

// Assumptions are the inputs that are neither measured here nor prices.
type Assumptions struct {
	// Cloud Run: what each request waits for besides its own CPU.
	FirestoreRPC time.Duration `json:"firestore_rpc"` // one Firestore round trip in the region
	InsertAll    time.Duration `json:"insert_all"`    // one BigQuery insertAll call
	FileTransfer time.Duration `json:"file_transfer"` // reading the export and uploading the staged NDJSON
	LoadJobWait  time.Duration `json:"load_job_wait"`
	RefreshWait  time.Duration `json:"refresh_wait"` // the refresh jobs of a file run in parallel
	VCPU         int64         `json:"vcpu"`         // per instance (Terraform: cpu = "1")
	MemoryMiB    int64         `json:"memory_mib"`   // per instance (Terraform: 512Mi)
	// Granularity: billed instance time is rounded up to it; requests are
	// taken not to overlap (an upper bound at 0.6 orders a second).
	Granularity time.Duration `json:"granularity"`

	PubSubMinBytes int64 `json:"pubsub_min_bytes"` // billed per publish and per push request at least

	// Dashboard: pages left open around the clock, each refreshing every
	// DashboardRefresh; every refresh runs two queries, its view over the
	// last DashboardRange and the discard summary (pedidos_descartados
	// received in that range and the ventas_hora_pais view over it).
	// DashboardDaysScanned are the daily partitions such a bound reaches
	// (window_start, received_at); 0 scans every retained day.
	// DashboardEachView: one page per aggregation; otherwise one page (the
	// page's ?aggregation= shows one at a time), counted on the view that
	// costs the most to scan.
	DashboardEachView    bool          `json:"dashboard_each_view"`
	DashboardRefresh     time.Duration `json:"dashboard_refresh"`
	DashboardRange       time.Duration `json:"dashboard_range"`
	DashboardDaysScanned int64         `json:"dashboard_days_scanned"`
	MinQueryBytes        int64         `json:"min_query_bytes"` // billed per table a query reads at least

	// Firestore storage: days a dedup record lives (7 days of retention after
	// its window, up to a day until the TTL sweep), and the bytes Firestore
	// adds to each document for its name, metadata and indexes.
	DedupDays   int64 `json:"dedup_days"`
	DocOverhead int64 `json:"doc_overhead"`

	// Cloud Storage operations per file besides the ones measured: the
	// ERP's upload (Class A), the staged NDJSON upload (Class A) and the
	// load job reading it (Class B).
	ExtraClassAPerFile int64 `json:"extra_class_a_per_file"`
	ExtraClassBPerFile int64 `json:"extra_class_b_per_file"`

	// Dataflow alternative: workers, their size and disks.
	DataflowWorkers   int64 `json:"dataflow_workers"`
	DataflowVCPUs     int64 `json:"dataflow_vcpus"`      // per worker (n1-standard-1)
	DataflowMemoryMB  int64 `json:"dataflow_memory_mb"`  // per worker: n1-standard-1 has 3.75 GB
	DataflowDiskGB    int64 `json:"dataflow_disk_gb"`    // per worker without Streaming Engine
	DataflowSEDiskGB  int64 `json:"dataflow_se_disk_gb"` // per worker with Streaming Engine
	DataflowSEPerByte int64 `json:"dataflow_se_factor"`  // Streaming Engine bytes processed per message byte
}

// DefaultAssumptions are the assumptions of docs/cost.md.
func DefaultAssumptions() Assumptions {
	return Assumptions{
		FirestoreRPC:         10 * time.Millisecond,
		InsertAll:            100 * time.Millisecond,
		FileTransfer:         2 * time.Second,
		LoadJobWait:          20 * time.Second,
		RefreshWait:          5 * time.Second,
		VCPU:                 1,
		MemoryMiB:            512,
		Granularity:          100 * time.Millisecond,
		PubSubMinBytes:       1_000,
		DashboardRefresh:     dashboard.DefaultRefresh,
		DashboardRange:       dashboard.DefaultRange,
		DashboardDaysScanned: daysTouched(dashboard.DefaultRange),
		MinQueryBytes:        10 * mib,
		DedupDays:            8,
		DocOverhead:          100,
		ExtraClassAPerFile:   2,
		ExtraClassBPerFile:   1,
		DataflowWorkers:      2,
		DataflowVCPUs:        1,
		DataflowMemoryMB:     3_750,
		DataflowDiskGB:       400,
		DataflowSEDiskGB:     30,
		DataflowSEPerByte:    2,
	}
}

// daysTouched is how many daily partitions a range of length d ending now
// reaches at most: it starts part-way through a day unless it starts at
// midnight.
func daysTouched(d time.Duration) int64 {
	day := 24 * time.Hour
	return int64((d+day-1)/day) + 1
}

// Inputs are everything the model needs.
type Inputs struct {
	Recorded Recorded
	Stream   Measurement // the stream measurement to use (Recorded.Stream or a variant)
	Volume   Volume
	Assume   Assumptions
	Prices   Prices
}

// DefaultInputs are the inputs of docs/cost.md.
func DefaultInputs(r Recorded) Inputs {
	return Inputs{Recorded: r, Stream: r.Stream, Volume: DefaultVolume(), Assume: DefaultAssumptions(), Prices: Published()}
}

// Line is one billed item of a month.
type Line struct {
	Service  string      `json:"service"`
	Item     string      `json:"item"`
	Quantity *big.Rat    `json:"-"` // in Price's unit (Per of them cost Amount)
	Shown    string      `json:"quantity"`
	Free     *big.Rat    `json:"-"` // free quantity, same unit
	Price    Price       `json:"price"`
	List     numeric.Dec `json:"list"` // without free usage
	Cost     numeric.Dec `json:"cost"` // after free usage
}

// Bill is a set of lines and their totals.
type Bill struct {
	Lines []Line      `json:"lines"`
	List  numeric.Dec `json:"list"`
	Total numeric.Dec `json:"total"`
}

// Service returns the list and after-free totals of one service's lines.
func (b Bill) Service(name string) (list, total numeric.Dec, err error) {
	for _, l := range b.Lines {
		if l.Service != name {
			continue
		}
		if list, err = list.Add(l.List); err != nil {
			return numeric.Dec{}, numeric.Dec{}, err
		}
		if total, err = total.Add(l.Cost); err != nil {
			return numeric.Dec{}, numeric.Dec{}, err
		}
	}
	return list, total, nil
}

// Services lists the services in order of first appearance.
func (b Bill) Services() []string {
	var out []string
	seen := map[string]bool{}
	for _, l := range b.Lines {
		if !seen[l.Service] {
			seen[l.Service] = true
			out = append(out, l.Service)
		}
	}
	return out
}

// Report is the model's answer.
type Report struct {
	Usage Usage `json:"usage"`
	Bill  Bill  `json:"bill"`
	// Dataflow is the same system with the real-time path (Cloud Run
	// orders and ticks, their Firestore state, Cloud Scheduler) replaced by
	// an always-on Dataflow job; one bill per way of running the job.
	Dataflow []Alternative `json:"dataflow"`
}

// Alternative is a bill for another design.
type Alternative struct {
	Name string `json:"name"`
	Bill Bill   `json:"bill"`
}

// Usage are the derived per-request and per-month figures.
type Usage struct {
	OrdersPerMonth     *big.Rat
	DeliveriesPerMonth *big.Rat
	TicksPerMonth      *big.Rat
	FilesPerMonth      *big.Rat
	// Seconds a request keeps an instance busy, before and after rounding.
	OrderWall, OrderBilled *big.Rat
	TickWall, TickBilled   *big.Rat
	FileWall, FileBilled   *big.Rat
	// Firestore operations a day: real-time path (orders and ticks) and
	// ingest ledger.
	Stream, Ledger FirestoreDay
	StoredGiB      *big.Rat
	// Pub/Sub: the messages' own bytes and the billed bytes a month;
	// BigQuery figures a month.
	MessageBytes        *big.Rat
	PubSubBytes         *big.Rat
	StreamedRows        *big.Rat
	StreamedBilledBytes *big.Rat
	PanesPerDay         map[string]*big.Rat // by panes table
	BigQueryStoredBytes *big.Rat
	RefreshJobs         *big.Rat
	RefreshScanBytes    *big.Rat
	// Dashboard: refreshes a day (of each page), and the bytes a month its
	// view queries and its discard summaries scan; DashboardScanBytes is
	// their sum.
	DashboardRefreshesPerDay *big.Rat
	DashboardViewBytes       *big.Rat
	DashboardSummaryBytes    *big.Rat
	DashboardScanBytes       *big.Rat
	// DashboardTables are the panes tables whose views the dashboard's
	// pages show (one page each), sorted.
	DashboardTables []string
	StorageBytes    *big.Rat
	ClassA, ClassB  *big.Rat
}

// FirestoreDay are a day's billed Firestore operations.
type FirestoreDay struct {
	Reads, Writes, Deletes, TTLDeletes *big.Rat
}

// Compute derives the monthly bill of in.
func Compute(in Inputs) (Report, error) {
	if err := in.check(); err != nil {
		return Report{}, err
	}
	u := usage(in)
	var r Report
	r.Usage = u
	b := &builder{}

	b.firestore(in, u.Stream, u.Ledger, u.StoredGiB)
	b.cloudRun(in, add(u.DeliveriesPerMonth, u.TicksPerMonth, u.FilesPerMonth),
		add(mul(u.DeliveriesPerMonth, u.OrderBilled), mul(u.TicksPerMonth, u.TickBilled), mul(u.FilesPerMonth, u.FileBilled)))
	b.shared(in, u)
	b.line("Cloud Scheduler", "tick job", ri(1), ri(in.Prices.Free.SchedulerJobs), in.Prices.SchedulerJob, "1 job")
	bill, err := b.bill()
	if err != nil {
		return Report{}, err
	}
	r.Bill = bill

	for _, se := range []bool{false, true} {
		a := &builder{}
		a.firestore(in, FirestoreDay{Reads: new(big.Rat), Writes: new(big.Rat), Deletes: new(big.Rat), TTLDeletes: new(big.Rat)}, u.Ledger, new(big.Rat))
		a.cloudRun(in, u.FilesPerMonth, mul(u.FilesPerMonth, u.FileBilled))
		a.shared(in, u)
		name := a.dataflow(in, u, se)
		ab, err := a.bill()
		if err != nil {
			return Report{}, err
		}
		r.Dataflow = append(r.Dataflow, Alternative{Name: name, Bill: ab})
	}
	return r, nil
}

func (in Inputs) check() error {
	var errs []error
	m, f, v := in.Stream, in.Recorded.File, in.Volume
	if m.Orders <= 0 || m.Deliveries <= 0 || m.Ticks <= 0 {
		errs = append(errs, fmt.Errorf("stream measurement has %d orders, %d deliveries, %d ticks", m.Orders, m.Deliveries, m.Ticks))
	}
	if f.Lines <= 0 || f.Loaded <= 0 {
		errs = append(errs, fmt.Errorf("file measurement has %d lines, %d loaded", f.Lines, f.Loaded))
	}
	if v.OrdersPerDay < 0 || v.FilesPerDay < 0 || v.DaysPerMonth <= 0 || v.TickEvery <= 0 || (24*time.Hour)%v.TickEvery != 0 {
		errs = append(errs, fmt.Errorf("volume %+v: days and tick interval must be positive, the interval must divide a day", v))
	}
	if in.Assume.DashboardRefresh <= 0 {
		errs = append(errs, errors.New("the dashboard's refresh period must be positive"))
	}
	if in.Assume.Granularity <= 0 {
		errs = append(errs, errors.New("the billing granularity must be positive"))
	}
	return errors.Join(errs...)
}

// usage extrapolates the measured counts linearly: order-side counts by
// orders, tick-side counts by ticks, file counts by files and lines.
func usage(in Inputs) Usage {
	m, f, v, a, cpu := in.Stream, in.Recorded.File, in.Volume, in.Assume, in.Recorded.CPU
	days := ri(v.DaysPerMonth)
	ticksPerDay := ri(int64(24 * time.Hour / v.TickEvery))
	perOrder := func(n int64) *big.Rat { return frac(n, m.Orders) } // per order published
	perTick := func(n int64) *big.Rat { return frac(n, m.Ticks) }   // per tick
	perLine := func(n int64) *big.Rat { return frac(n, f.Lines) }   // per export line
	ordersDay, filesDay := ri(v.OrdersPerDay), ri(v.FilesPerDay)
	linesDay := mul(filesDay, ri(v.LinesPerFile))

	var u Usage
	u.OrdersPerMonth = mul(ordersDay, days)
	u.DeliveriesPerMonth = mul(u.OrdersPerMonth, perOrder(m.Deliveries))
	u.TicksPerMonth = mul(ticksPerDay, days)
	u.FilesPerMonth = mul(filesDay, days)

	// Request times: CPU from the benchmarks plus the round trips counted.
	rtt := seconds(a.FirestoreRPC)
	gran := seconds(a.Granularity)
	cpuSec := func(fg Figure) *big.Rat { return frac(fg.Nanos, int64(time.Second)) }
	var orderAppends, tickAppends int64
	for _, ap := range m.OrderAppends {
		orderAppends += ap.Calls
	}
	for _, ap := range m.TickAppends {
		tickAppends += ap.Calls
	}
	u.OrderWall = add(cpuSec(cpu.Order),
		mul(frac(m.OrderOps.RPCs, m.Deliveries), rtt),
		mul(frac(orderAppends, m.Deliveries), seconds(a.InsertAll)))
	u.OrderBilled = ceilTo(u.OrderWall, gran)
	// A tick's transactions and queries run one after another (stream's
	// tickLive), so each round trip adds to its time.
	u.TickWall = add(cpuSec(cpu.Tick),
		mul(perTick(m.TickOps.RPCs), rtt),
		mul(perTick(tickAppends), seconds(a.InsertAll)))
	u.TickBilled = ceilTo(u.TickWall, gran)
	u.FileWall = add(
		mul(cpuSec(cpu.File), perLine(v.LinesPerFile)),
		mul(frac(cpu.Encode.Nanos, int64(time.Second)), frac(f.Loaded, f.Lines), ri(v.LinesPerFile)),
		mul(ri(f.Ledger.RPCs), rtt),
		seconds(a.FileTransfer), seconds(a.LoadJobWait), seconds(a.RefreshWait))
	u.FileBilled = ceilTo(u.FileWall, gran)

	// Firestore operations a day.
	day := func(o, t Ops, pick func(Ops) int64) *big.Rat {
		return add(mul(ordersDay, perOrder(pick(o))), mul(ticksPerDay, perTick(pick(t))))
	}
	u.Stream = FirestoreDay{
		Reads:      day(m.OrderOps, m.TickOps, Ops.BilledReads),
		Writes:     day(m.OrderOps, m.TickOps, func(o Ops) int64 { return o.Writes }),
		Deletes:    day(m.OrderOps, m.TickOps, func(o Ops) int64 { return o.Deletes }),
		TTLDeletes: day(m.OrderOps, m.TickOps, func(o Ops) int64 { return o.TTLDeletes }),
	}
	u.Ledger = FirestoreDay{
		Reads:      mul(filesDay, ri(f.Ledger.BilledReads())),
		Writes:     mul(filesDay, ri(f.Ledger.Writes)),
		Deletes:    mul(filesDay, ri(f.Ledger.Deletes)),
		TTLDeletes: mul(filesDay, ri(f.Ledger.TTLDeletes)),
	}
	// Stored: the dedup records of DedupDays days, at their measured size.
	ttlDocsDay := u.Stream.TTLDeletes
	bytesPerDoc := add(frac(m.OrderOps.TTLBytes+m.TickOps.TTLBytes, max(1, m.OrderOps.TTLDeletes+m.TickOps.TTLDeletes)), ri(a.DocOverhead))
	ledgerDocs := mul(filesDay, days, ri(v.RetainedMonths), ri(f.Ledger.Writes)) // at most one document per write
	u.StoredGiB = div(add(mul(ttlDocsDay, ri(a.DedupDays), bytesPerDoc), mul(ledgerDocs, ri(1024+a.DocOverhead))), ri(gib))

	// Pub/Sub: each publish and each push delivery billed at least the
	// minimum.
	size := frac(m.MessageBytes, m.Deliveries)
	u.MessageBytes = mul(u.OrdersPerMonth, size)
	u.PubSubBytes = mul(add(u.OrdersPerMonth, u.DeliveriesPerMonth), maxRat(size, ri(a.PubSubMinBytes)))

	// BigQuery streaming: the rows appended by orders and by ticks.
	var oRows, oBilled, oLogical, tRows, tBilled, tLogical int64
	for _, ap := range m.OrderAppends {
		oRows, oBilled, oLogical = oRows+ap.Rows, oBilled+ap.BilledBytes, oLogical+ap.LogicalBytes
	}
	for _, ap := range m.TickAppends {
		tRows, tBilled, tLogical = tRows+ap.Rows, tBilled+ap.BilledBytes, tLogical+ap.LogicalBytes
	}
	monthly := func(o, t int64) *big.Rat {
		return add(mul(u.OrdersPerMonth, perOrder(o)), mul(u.TicksPerMonth, perTick(t)))
	}
	u.StreamedRows = monthly(oRows, tRows)
	u.StreamedBilledBytes = monthly(oBilled, tBilled)
	u.PanesPerDay = map[string]*big.Rat{}
	for _, table := range slices.Sorted(maps.Keys(m.PaneViews)) {
		u.PanesPerDay[table] = div(monthly(m.OrderAppends[table].Rows, m.TickAppends[table].Rows), days)
	}

	// BigQuery storage after RetainedMonths: the loaded lines and the
	// streamed rows, at their logical size.
	months := ri(v.RetainedMonths)
	loadedPerMonth := mul(u.FilesPerMonth, ri(v.LinesPerFile), perLine(f.LoadedBytes))
	u.BigQueryStoredBytes = mul(months, add(loadedPerMonth, monthly(oLogical, tLogical)))

	// Queries: a refresh job per touched date per file, each reading one
	// day's partition (the day before holds the previous day's export);
	// the dashboard's queries read the days of panes they scan.
	u.RefreshJobs = mul(u.FilesPerMonth, ri(f.RefreshJobs))
	partition := mul(frac(f.RefreshScanBytes, f.Loaded), frac(f.Loaded, f.Lines), linesDay)
	minScan := ri(a.MinQueryBytes)
	u.RefreshScanBytes = mul(u.RefreshJobs, maxRat(partition, minScan))
	scanDays := ri(a.DashboardDaysScanned)
	if a.DashboardDaysScanned == 0 {
		scanDays = mul(days, months)
	}
	// A query reads the referenced columns of the days it scans of each
	// table, at least MinQueryBytes per table. A view query is counted at
	// its view's columns; the discard summary at the view's columns of
	// ventas_hora_pais and whole rows of pedidos_descartados, an upper
	// bound (it reads fewer columns of both).
	scan := func(perDay, rowBytes *big.Rat) *big.Rat { return maxRat(mul(rowBytes, perDay, scanDays), minScan) }
	perQuery := map[string]*big.Rat{}
	for table, perDay := range u.PanesPerDay {
		pv := m.PaneViews[table]
		perQuery[table] = scan(perDay, frac(pv.Bytes, max(1, pv.Panes)))
	}
	dl := warehouse.PedidosDescartados
	deadLettersDay := div(monthly(m.OrderAppends[dl].LogicalBytes, m.TickAppends[dl].LogicalBytes), days)
	// Without ventas_hora_pais in the scenario its view is still read (an
	// empty table), billed the minimum.
	countries := minScan
	if q, ok := perQuery[aggregation.PanesTable(warehouse.VentasHoraPais)]; ok {
		countries = q
	}
	summary := add(scan(deadLettersDay, ri(1)), countries)
	u.DashboardTables = slices.Sorted(maps.Keys(perQuery))
	if !a.DashboardEachView && len(u.DashboardTables) > 1 {
		top := u.DashboardTables[0]
		for _, table := range u.DashboardTables[1:] {
			if perQuery[table].Cmp(perQuery[top]) > 0 {
				top = table
			}
		}
		u.DashboardTables = []string{top}
	}
	// Every page refreshes DashboardRefreshesPerDay times a day, each time
	// its view query and its discard summary.
	u.DashboardRefreshesPerDay = frac(int64(24*time.Hour), int64(a.DashboardRefresh))
	refreshes := mul(u.DashboardRefreshesPerDay, days)
	u.DashboardViewBytes, u.DashboardSummaryBytes = new(big.Rat), new(big.Rat)
	for _, table := range u.DashboardTables {
		u.DashboardViewBytes = add(u.DashboardViewBytes, mul(refreshes, perQuery[table]))
		u.DashboardSummaryBytes = add(u.DashboardSummaryBytes, mul(refreshes, summary))
	}
	u.DashboardScanBytes = add(u.DashboardViewBytes, u.DashboardSummaryBytes)

	// Cloud Storage: the exports and quarantine files kept, the operations
	// of each file.
	kept := add(ri(v.BytesPerFile), mul(frac(f.QuarantineBytes, f.Lines), ri(v.LinesPerFile)))
	u.StorageBytes = mul(kept, u.FilesPerMonth, months)
	u.ClassA = mul(u.FilesPerMonth, ri(f.ObjectCreates+a.ExtraClassAPerFile))
	u.ClassB = mul(u.FilesPerMonth, ri(f.ObjectOpens+a.ExtraClassBPerFile))
	return u
}

// builder collects lines and their costs; the first error sticks.
type builder struct {
	lines []Line
	err   error
}

func (b *builder) line(service, item string, qty, free *big.Rat, p Price, shown string) {
	if b.err != nil {
		return
	}
	list, err := charge(p, qty)
	if err != nil {
		b.err = fmt.Errorf("%s %s: %w", service, item, err)
		return
	}
	cost, err := charge(p, positive(sub(qty, free)))
	if err != nil {
		b.err = fmt.Errorf("%s %s: %w", service, item, err)
		return
	}
	b.lines = append(b.lines, Line{Service: service, Item: item, Quantity: qty, Free: free, Shown: shown, Price: p, List: list, Cost: cost})
}

func (b *builder) bill() (Bill, error) {
	if b.err != nil {
		return Bill{}, b.err
	}
	bl := Bill{Lines: b.lines}
	for _, l := range b.lines {
		var err error
		if bl.List, err = bl.List.Add(l.List); err != nil {
			return Bill{}, err
		}
		if bl.Total, err = bl.Total.Add(l.Cost); err != nil {
			return Bill{}, err
		}
	}
	return bl, nil
}

// firestore bills the real-time path's and the ledger's operations. The
// free quota is daily, so it is taken off each day's operations.
func (b *builder) firestore(in Inputs, s, l FirestoreDay, storedGiB *big.Rat) {
	p, fr := in.Prices, in.Prices.Free
	days := ri(in.Volume.DaysPerMonth)
	month := func(perDay *big.Rat) *big.Rat { return mul(perDay, days) }
	free := func(perDay, quota *big.Rat) *big.Rat {
		// the free part of a month: min(day, quota) each day
		if perDay.Cmp(quota) < 0 {
			return mul(perDay, days)
		}
		return mul(quota, days)
	}
	reads, writes, deletes := add(s.Reads, l.Reads), add(s.Writes, l.Writes), add(s.Deletes, l.Deletes)
	b.line("Firestore", "document reads", month(reads), free(reads, ri(fr.FirestoreReadsPerDay)), p.FirestoreRead, Num(month(reads), 0))
	b.line("Firestore", "document writes", month(writes), free(writes, ri(fr.FirestoreWritesPerDay)), p.FirestoreWrite, Num(month(writes), 0))
	b.line("Firestore", "document deletes", month(deletes), free(deletes, ri(fr.FirestoreDeletesPerDay)), p.FirestoreDelete, Num(month(deletes), 0))
	ttl := add(s.TTLDeletes, l.TTLDeletes)
	b.line("Firestore", "TTL deletes (no free quota)", month(ttl), new(big.Rat), p.FirestoreDelete, Num(month(ttl), 0))
	b.line("Firestore", "stored data", storedGiB, ri(fr.FirestoreStorageGiB), p.FirestoreStorage, Num(storedGiB, 3)+" GiB")
}

// cloudRun bills requests and the instance time they keep busy.
func (b *builder) cloudRun(in Inputs, requests, busySeconds *big.Rat) {
	p, fr, a := in.Prices, in.Prices.Free, in.Assume
	vcpu := mul(busySeconds, ri(a.VCPU))
	mem := mul(busySeconds, frac(a.MemoryMiB, 1024))
	b.line("Cloud Run", "vCPU-seconds", vcpu, ri(fr.CloudRunVCPUSeconds), p.CloudRunCPU, Num(vcpu, 0))
	b.line("Cloud Run", "GiB-seconds", mem, ri(fr.CloudRunGiBSeconds), p.CloudRunMemory, Num(mem, 0))
	b.line("Cloud Run", "requests", requests, ri(fr.CloudRunRequests), p.CloudRunRequests, Num(requests, 0))
}

// shared bills what both designs pay: Pub/Sub, BigQuery, Cloud Storage.
func (b *builder) shared(in Inputs, u Usage) {
	p, fr := in.Prices, in.Prices.Free
	b.line("Pub/Sub", "throughput (publish + push)", div(u.PubSubBytes, ri(tib)), mul(ri(fr.PubSubGiB), frac(1, 1024)), p.PubSubThroughput,
		Num(div(u.PubSubBytes, ri(gib)), 2)+" GiB")
	b.line("BigQuery", "streaming inserts (panes, dead letters)", div(u.StreamedBilledBytes, ri(mib)), new(big.Rat), p.BigQueryStreaming,
		Num(u.StreamedRows, 0)+" rows, "+Num(div(u.StreamedBilledBytes, ri(mib)), 0)+" MiB billed")
	stored := div(u.BigQueryStoredBytes, ri(gib))
	b.line("BigQuery", "storage after "+fmt.Sprint(in.Volume.RetainedMonths)+" months", stored, ri(fr.BigQueryStorGiB), p.BigQueryStorage, Num(stored, 2)+" GiB")
	q := div(add(u.RefreshScanBytes, u.DashboardScanBytes), ri(tib))
	b.line("BigQuery", "queries: daily refresh + dashboard", q, ri(fr.BigQueryQueryTiB), p.BigQueryQuery,
		Num(div(add(u.RefreshScanBytes, u.DashboardScanBytes), ri(gib)), 1)+" GiB (dashboard: views "+
			Num(div(u.DashboardViewBytes, ri(gib)), 1)+" GiB, discard summaries "+Num(div(u.DashboardSummaryBytes, ri(gib)), 1)+" GiB)")
	b.line("BigQuery", "load jobs", u.FilesPerMonth, u.FilesPerMonth, Price{Per: 1, Unit: "load job", Source: bigqueryPricing, Read: ReadOn + " (stored copy)", Note: "loading data is free"},
		Num(u.FilesPerMonth, 0)+" jobs")
	gcs := div(u.StorageBytes, ri(gib))
	b.line("Cloud Storage", "exports and quarantine kept "+fmt.Sprint(in.Volume.RetainedMonths)+" months", gcs, new(big.Rat), p.StorageStandard, Num(gcs, 2)+" GiB")
	b.line("Cloud Storage", "Class A operations", u.ClassA, new(big.Rat), p.StorageClassA, Num(u.ClassA, 0))
	b.line("Cloud Storage", "Class B operations", u.ClassB, new(big.Rat), p.StorageClassB, Num(u.ClassB, 0))
}

// dataflow bills an always-on streaming job and names it.
func (b *builder) dataflow(in Inputs, u Usage, streamingEngine bool) string {
	p, a := in.Prices, in.Assume
	hours := mul(ri(in.Volume.DaysPerMonth), ri(24))
	workers := ri(a.DataflowWorkers)
	vcpuH := mul(workers, ri(a.DataflowVCPUs), hours)
	memGBh := mul(workers, frac(a.DataflowMemoryMB, 1000), hours)
	disk := a.DataflowDiskGB
	name := fmt.Sprintf("Dataflow, %d workers n1-standard-1, shuffle on %d GB Persistent Disk each", a.DataflowWorkers, disk)
	if streamingEngine {
		disk = a.DataflowSEDiskGB
		name = fmt.Sprintf("Dataflow, %d workers n1-standard-1, Streaming Engine (%d GB disk each)", a.DataflowWorkers, disk)
	}
	diskGBh := mul(workers, ri(disk), hours)
	b.line("Dataflow", "worker vCPU-hours", vcpuH, new(big.Rat), p.DataflowVCPU, Num(vcpuH, 0))
	b.line("Dataflow", "worker memory GB-hours", memGBh, new(big.Rat), p.DataflowMemory, Num(memGBh, 0))
	b.line("Dataflow", "Persistent Disk GB-hours", diskGBh, new(big.Rat), p.DataflowDisk, Num(diskGBh, 0))
	if streamingEngine {
		processed := div(mul(u.MessageBytes, ri(a.DataflowSEPerByte)), ri(gib)) // the messages, read and shuffled
		b.line("Dataflow", "Streaming Engine data processed", processed, new(big.Rat), p.DataflowStreamingEngine, Num(processed, 2)+" GiB")
	}
	return name
}
