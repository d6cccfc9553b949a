package cost

import (
	"errors"
	"fmt"
	"math/big"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/alpinashop/alpipe/internal/aggregation"
	"github.com/alpinashop/alpipe/internal/numeric"
	"github.com/alpinashop/alpipe/internal/stream"
	"github.com/alpinashop/alpipe/internal/warehouse"
	"github.com/alpinashop/alpipe/internal/window"
)

// Blocks renders the generated parts of docs/cost.md from the recorded
// measurement, by block name. Everything numeric in the document lives in
// these blocks, so that TestCostDocMatchesModel can hold the document to
// the model.
func Blocks(r Recorded) (map[string]string, error) {
	in := DefaultInputs(r)
	rep, err := Compute(in)
	if err != nil {
		return nil, err
	}
	blocks := map[string]string{}
	var errs []error
	put := func(name string, s string, err error) {
		if err != nil {
			errs = append(errs, fmt.Errorf("block %s: %w", name, err))
			return
		}
		blocks[name] = s
	}
	s, err := summary(in, rep)
	put("summary", s, err)
	put("scenario", scenarioTable(r), nil)
	put("measured", measuredTable(r), nil)
	put("transactions", transactionsTable(r), nil)
	put("cpu", cpuTable(r), nil)
	put("requests", requestsTable(in, rep), nil)
	put("bill", billTable(rep.Bill), nil)
	s, err = servicesTable(rep)
	put("services", s, err)
	put("dataflow", dataflowTable(rep), nil)
	s, err = sensitivityTable(in, rep)
	put("sensitivity", s, err)
	put("prices", pricesTable(in.Prices), nil)
	put("assumptions", assumptionsTable(in), nil)
	return blocks, errors.Join(errs...)
}

func summary(in Inputs, rep Report) (string, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "- **alpipe, all services: %s a month** after the free usage Google grants (%s at list prices), at %s orders and %d export a day.\n",
		Money(rep.Bill.Total), Money(rep.Bill.List), Num(ri(in.Volume.OrdersPerDay), 0), in.Volume.FilesPerDay)
	if err := servicesLine(&b, rep.Bill); err != nil {
		return "", err
	}
	for _, a := range rep.Dataflow {
		ratio := "n/a"
		if rep.Bill.List.Sign() > 0 {
			ratio = Num(new(big.Rat).SetFrac(a.Bill.List.BigNanos(), rep.Bill.List.BigNanos()), 1) + "x"
		}
		fmt.Fprintf(&b, "- The same system with the real-time path on %s: %s a month (%s at list prices, %s alpipe's list total).\n",
			a.Name, Money(a.Bill.Total), Money(a.Bill.List), ratio)
	}
	if err := targetLine(&b, in, rep); err != nil {
		return "", err
	}
	u := rep.Usage
	fmt.Fprintf(&b, "- Per day: %s Firestore reads, %s writes; the ticks make %s of the reads.\n",
		Num(add(u.Stream.Reads, u.Ledger.Reads), 0), Num(add(u.Stream.Writes, u.Ledger.Writes), 0),
		pct(tickShare(in)))
	return b.String(), nil
}

// servicesLine lists the services from the most expensive after free
// usage, and the bill's most expensive line with what the bill is without
// it.
func servicesLine(b *strings.Builder, bill Bill) error {
	type svc struct {
		name string
		tot  [2]numeric.Dec
	}
	var svcs []svc
	for _, name := range bill.Services() {
		tot, err := serviceTotals(bill, name)
		if err != nil {
			return err
		}
		svcs = append(svcs, svc{name, tot})
	}
	slices.SortStableFunc(svcs, func(x, y svc) int { return y.tot[1].Cmp(x.tot[1]) })
	var parts []string
	for _, sv := range svcs {
		parts = append(parts, fmt.Sprintf("%s %s (%s at list prices)", sv.name, Money(sv.tot[1]), Money(sv.tot[0])))
	}
	fmt.Fprintf(b, "- By service, after free usage: %s.\n", strings.Join(parts, ", "))
	if len(bill.Lines) == 0 {
		return nil
	}
	top := bill.Lines[0]
	for _, l := range bill.Lines[1:] {
		if l.Cost.Cmp(top.Cost) > 0 {
			top = l
		}
	}
	rest, err := bill.Total.Sub(top.Cost)
	if err != nil {
		return err
	}
	fmt.Fprintf(b, "- The largest line after free usage: %s, %s, %s a month (%s); the rest of the bill comes to %s.\n",
		top.Service, top.Item, Money(top.Cost), top.Shown, Money(rest))
	return nil
}

// Target is what the issue asks alpipe to cost at most a month, after free
// usage.
var Target = numeric.FromNanos(5_000_000_000)

// targetLine says whether the bill meets Target and, from the measured
// variant without the later aggregations, what they add.
func targetLine(b *strings.Builder, in Inputs, rep Report) error {
	verdict := "**within the $5 a month target**"
	if rep.Bill.Total.Cmp(Target) > 0 {
		over, err := rep.Bill.Total.Sub(Target)
		if err != nil {
			return err
		}
		verdict = "**above the $5 a month target, by " + Money(over) + "**"
	}
	if len(in.Recorded.Scenario.Specs) < 2 {
		fmt.Fprintf(b, "- That is %s.\n", verdict)
		return nil
	}
	for _, v := range Variants() {
		if v.Name != OnlyFirst {
			continue
		}
		vin, err := VariantInputs(in, v)
		if err != nil {
			return err
		}
		vr, err := Compute(vin)
		if err != nil {
			return err
		}
		fs, err := serviceTotals(vr.Bill, "Firestore")
		if err != nil {
			return err
		}
		more, err := rep.Bill.Total.Sub(vr.Bill.Total)
		if err != nil {
			return err
		}
		var rest []string
		for _, sp := range in.Recorded.Scenario.Specs[1:] {
			rest = append(rest, sp.Name)
		}
		fmt.Fprintf(b, "- That is %s. Measured alone, %s costs %s a month (Firestore %s); %s adds %s.\n",
			verdict, in.Recorded.Scenario.Specs[0].Name, Money(vr.Bill.Total), Money(fs[1]), strings.Join(rest, ", "), Money(more))
	}
	return nil
}

// tickShare is the ticks' share of the real-time path's reads.
func tickShare(in Inputs) *big.Rat {
	m, v := in.Stream, in.Volume
	ticks := mul(ri(int64(24*time.Hour/v.TickEvery)), frac(m.TickOps.BilledReads(), m.Ticks))
	orders := mul(ri(v.OrdersPerDay), frac(m.OrderOps.BilledReads(), m.Orders))
	return div(ticks, add(ticks, orders))
}

func pct(x *big.Rat) string { return Num(mul(x, ri(100)), 0) + "%" }

func serviceTotals(b Bill, name string) ([2]numeric.Dec, error) {
	l, t, err := b.Service(name)
	return [2]numeric.Dec{l, t}, err
}

type table struct {
	head []string
	rows [][]string
}

func (t *table) add(cells ...string) { t.rows = append(t.rows, cells) }

func (t table) String() string {
	var b strings.Builder
	b.WriteString("| " + strings.Join(t.head, " | ") + " |\n|")
	for range t.head {
		b.WriteString("---|")
	}
	b.WriteString("\n")
	for _, r := range t.rows {
		b.WriteString("| " + strings.Join(r, " | ") + " |\n")
	}
	return b.String()
}

func scenarioTable(r Recorded) string {
	s := r.Scenario
	t := table{head: []string{"input", "value"}}
	t.add("orders", fmt.Sprintf("%s a day, one every %v, from %d countries (%s)", Num(ri(s.OrdersPerDay), 0),
		time.Duration(int64(24*time.Hour)/max(1, s.OrdersPerDay)), len(s.Countries), countryShares(s.Countries)))
	var bands []string
	for _, d := range s.Delays {
		bands = append(bands, fmt.Sprintf("%s%% %v to %v", ppm(d.Share), d.Min, d.Max))
	}
	t.add("arrival delay after the event time", strings.Join(bands, "; "))
	t.add("redeliveries (Pub/Sub duplicates)", fmt.Sprintf("%s%%, %v after the first delivery", ppm(s.Duplicates), s.RedeliverAfter))
	t.add("invalid messages", ppm(s.Invalid)+"% (no momento_evento attribute)")
	t.add("order lines", lineCounts(s)+"; the lines of an order have distinct SKUs (the cart merges a product added twice)")
	cat := newCatalogue(s.Catalogue)
	t.add("SKUs", fmt.Sprintf("%s in the catalogue (AlpinaShop's documents do not give its size: an assumption); a line's SKU drawn by Zipf's law, weight 1/rank: %s has %s of the weight, the top 20%% of the SKUs %s (a shop's 80/20)",
		Num(ri(int64(s.Catalogue.SKUs)), 0), cat.names[0], pct1(cat.share(1)), pct(cat.share(s.Catalogue.SKUs/5))))
	for _, sp := range s.Specs {
		t.add("aggregation", aggregationText(sp))
	}
	t.add("simulated", fmt.Sprintf("%v of warm-up from %s, then %v counted; a tick every %v", s.WarmUp, s.Start.Format(time.RFC3339), s.Measured, s.TickEvery))
	t.add("measured hour", fmt.Sprintf("%s messages (%s invalid), %s deliveries: %s", Num(ri(r.Stream.Orders), 0), Num(ri(r.Stream.Invalid), 0),
		Num(ri(r.Stream.Deliveries), 0), fates(r.Stream)))
	t.add("measured hour, lines", fmt.Sprintf("%s order lines in the valid messages, %s a message", Num(ri(r.Stream.Lines), 0),
		Num(frac(r.Stream.Lines, max(1, r.Stream.Orders-r.Stream.Invalid)), 2)))
	for _, sp := range s.Specs {
		t.add("open windows, "+sp.Name, fmt.Sprintf("%s per tick on average", Num(frac(r.Stream.OpenWindows[sp.Name], max(1, r.Stream.Ticks)), 1)))
	}
	f := r.FileScenario
	t.add("export file", fmt.Sprintf("%s lines, %s bytes; %s%% dated the day before, %s%% broken", Num(ri(r.File.Lines), 0), Num(ri(r.File.Bytes), 0), ppm(f.DayBefore), ppm(f.Broken)))
	return t.String()
}

func lineCounts(s Scenario) string {
	var parts []string
	var sum int64
	for _, l := range s.Lines {
		parts = append(parts, fmt.Sprintf("%d: %s%%", l.Lines, ppm(l.Share)))
		sum += int64(l.Lines) * int64(l.Share)
	}
	return Num(frac(sum, 1_000_000), 2) + " an order on average (" + strings.Join(parts, ", ") + ")"
}

func aggregationText(sp window.Spec) string {
	w := fmt.Sprintf("fixed %v windows", sp.WindowSize)
	if sp.Sliding() {
		w = fmt.Sprintf("sliding %v windows every %v (%d windows per element)", sp.WindowSize, sp.Period, sp.WindowSize/sp.Period)
	}
	return fmt.Sprintf("%s: %s, key %s, D = %v, L = %v, E = %v, Ld = %v, %s", sp.Name, w, sp.KeyField,
		sp.OutOfOrderness, sp.AllowedLateness, sp.EarlyDelay, sp.LateDelay, sp.Accumulation)
}

func pct1(x *big.Rat) string { return Num(mul(x, ri(100)), 1) + "%" }

func countryShares(cs []Country) string {
	var parts []string
	for i, c := range cs {
		if i == 5 {
			parts = append(parts, fmt.Sprintf("%d others", len(cs)-i))
			break
		}
		parts = append(parts, c.Code+" "+ppm(c.Share)+"%")
	}
	return strings.Join(parts, ", ")
}

func ppm(p PerMillion) string {
	return strings.TrimSuffix(strings.TrimRight(Num(frac(int64(p), 10_000), 2), "0"), ".")
}

func fates(m Measurement) string {
	var parts []string
	for _, f := range []stream.Fate{stream.Accepted, stream.Duplicate, stream.TooLate, stream.Invalid} {
		parts = append(parts, fmt.Sprintf("%d %s", m.Fates[f], f))
	}
	return strings.Join(parts, ", ") + fmt.Sprintf(" (%d of the accepted late)", m.Late)
}

func measuredTable(r Recorded) string {
	m, f := r.Stream, r.File
	per := func(n, d int64) string { return Num(frac(n, d), 2) }
	t := table{head: []string{"operation", "per order", "per tick", "per file (Claim + Finish)"}}
	row := func(name string, pick func(Ops) int64) {
		t.add(name, per(pick(m.OrderOps), m.Orders), per(pick(m.TickOps), m.Ticks), per(pick(f.Ledger), 1))
	}
	row("Firestore reads billed (documents read + query results, at least 1 per query)", Ops.BilledReads)
	row("... of which lookups of missing documents", func(o Ops) int64 { return o.ReadsMissing })
	row("... of which query (List) results", func(o Ops) int64 { return o.ListReads })
	row("Firestore writes", func(o Ops) int64 { return o.Writes })
	row("Firestore deletes", func(o Ops) int64 { return o.Deletes })
	row("Firestore TTL deletes (documents left to expire)", func(o Ops) int64 { return o.TTLDeletes })
	row("transactions", func(o Ops) int64 { return o.Transactions })
	row("Firestore round trips (estimate)", func(o Ops) int64 { return o.RPCs })
	app := func(as map[string]Appends, pick func(Appends) int64) int64 {
		var n int64
		for _, a := range as {
			n += pick(a)
		}
		return n
	}
	t.add("BigQuery insertAll calls", per(app(m.OrderAppends, func(a Appends) int64 { return a.Calls }), m.Orders),
		per(app(m.TickAppends, func(a Appends) int64 { return a.Calls }), m.Ticks), "0")
	t.add("BigQuery rows streamed (panes + dead letters)", per(app(m.OrderAppends, func(a Appends) int64 { return a.Rows }), m.Orders),
		per(app(m.TickAppends, func(a Appends) int64 { return a.Rows }), m.Ticks), "0")
	t.add("... logical bytes", per(app(m.OrderAppends, func(a Appends) int64 { return a.LogicalBytes }), m.Orders),
		per(app(m.TickAppends, func(a Appends) int64 { return a.LogicalBytes }), m.Ticks), "0")
	t.add("... billed bytes (1 KB minimum per row)", per(app(m.OrderAppends, func(a Appends) int64 { return a.BilledBytes }), m.Orders),
		per(app(m.TickAppends, func(a Appends) int64 { return a.BilledBytes }), m.Ticks), "0")
	t.add("Pub/Sub message bytes (data + attributes)", per(m.MessageBytes, m.Orders), "0", "0")
	t.add("BigQuery load jobs / refresh query jobs", "0", "0", fmt.Sprintf("%d / %d", f.Loads, f.RefreshJobs))
	t.add("rows loaded / quarantined", "0", "0", fmt.Sprintf("%s / %s", Num(ri(f.Loaded), 0), Num(ri(f.Quarantined), 0)))
	t.add("logical bytes loaded / read by the refresh jobs", "0", "0", fmt.Sprintf("%s / %s", Num(ri(f.LoadedBytes), 0), Num(ri(f.RefreshScanBytes), 0)))
	t.add("Cloud Storage objects read / written (quarantine)", "0", "0", fmt.Sprintf("%d / %d (%s bytes)", f.ObjectOpens, f.ObjectCreates, Num(ri(f.QuarantineBytes), 0)))
	return t.String()
}

func transactionsTable(r Recorded) string {
	m := r.Stream
	kinds := map[string]bool{}
	for k := range m.OrderOps.TxByKind {
		kinds[k] = true
	}
	for k := range m.TickOps.TxByKind {
		kinds[k] = true
	}
	names := make([]string, 0, len(kinds))
	for k := range kinds {
		names = append(names, k)
	}
	slices.Sort(names)
	t := table{head: []string{"transaction", "per order", "per tick", "round trips each"}}
	for _, k := range names {
		n := m.OrderOps.TxByKind[k] + m.TickOps.TxByKind[k]
		rpcs := m.OrderOps.RPCsByKind[k] + m.TickOps.RPCsByKind[k]
		t.add(k, Num(frac(m.OrderOps.TxByKind[k], m.Orders), 3), Num(frac(m.TickOps.TxByKind[k], m.Ticks), 2), Num(frac(rpcs, n), 2))
	}
	t.add("list (query)", Num(frac(m.OrderOps.Lists, m.Orders), 3), Num(frac(m.TickOps.Lists, m.Ticks), 2), "1.00")
	return t.String()
}

func cpuTable(r Recorded) string {
	t := table{head: []string{"figure", "value", "command", "metric", "run"}}
	for _, c := range []struct {
		name string
		f    Figure
	}{{"CPU per order delivery", r.CPU.Order}, {"CPU per tick", r.CPU.Tick}, {"CPU per export file (ingest path)", r.CPU.File}, {"CPU per line, NDJSON staging", r.CPU.Encode}} {
		t.add(c.name, fmt.Sprintf("%s µs per %s", Num(frac(c.f.Nanos, 1000), 1), c.f.Per), "`"+c.f.Command+"`", c.f.Metric, c.f.On)
	}
	return t.String()
}

func requestsTable(in Inputs, rep Report) string {
	u := rep.Usage
	ms := func(x *big.Rat) string { return Num(mul(x, ri(1000)), 1) + " ms" }
	t := table{head: []string{"request", "a month", "busy time each (CPU + waits)", "billed each (rounded up to 100 ms)"}}
	t.add("order push (deliveries, redeliveries included)", Num(u.DeliveriesPerMonth, 0), ms(u.OrderWall), ms(u.OrderBilled))
	t.add("tick (Cloud Scheduler)", Num(u.TicksPerMonth, 0), ms(u.TickWall), ms(u.TickBilled))
	t.add("export file (Eventarc)", Num(u.FilesPerMonth, 0), ms(u.FileWall), ms(u.FileBilled))
	return t.String()
}

func billTable(b Bill) string {
	t := table{head: []string{"service", "item", "a month", "unit price", "list", "after free usage"}}
	for _, l := range b.Lines {
		t.add(l.Service, l.Item, l.Shown, priceText(l.Price), Money(l.List), Money(l.Cost))
	}
	t.add("**total**", "", "", "", "**"+Money(b.List)+"**", "**"+Money(b.Total)+"**")
	return t.String()
}

func priceText(p Price) string {
	s := "$" + amountText(p.Amount) + " per "
	if p.Per != 1 {
		s += Num(ri(p.Per), 0) + " "
	}
	s += p.Unit
	if p.Assumed {
		s += " (assumed)"
	}
	return s
}

// amountText renders a unit price exactly, with at least two decimals.
func amountText(d numeric.Dec) string {
	s := d.String()
	whole, f, _ := strings.Cut(s, ".")
	for len(f) < 2 {
		f += "0"
	}
	return whole + "." + f
}

func servicesTable(rep Report) (string, error) {
	t := table{head: []string{"service", "list", "after free usage"}}
	for _, s := range rep.Bill.Services() {
		tot, err := serviceTotals(rep.Bill, s)
		if err != nil {
			return "", err
		}
		t.add(s, Money(tot[0]), Money(tot[1]))
	}
	t.add("**total**", "**"+Money(rep.Bill.List)+"**", "**"+Money(rep.Bill.Total)+"**")
	return t.String(), nil
}

func dataflowTable(rep Report) string {
	var b strings.Builder
	t := table{head: []string{"design", "list", "after free usage"}}
	t.add("alpipe (Cloud Run + Firestore + Cloud Scheduler)", Money(rep.Bill.List), Money(rep.Bill.Total))
	for _, a := range rep.Dataflow {
		t.add(a.Name, Money(a.Bill.List), Money(a.Bill.Total))
	}
	b.WriteString(t.String())
	for _, a := range rep.Dataflow {
		b.WriteString("\n" + a.Name + ", its own lines:\n\n")
		d := table{head: []string{"item", "a month", "unit price", "list"}}
		for _, l := range a.Bill.Lines {
			if l.Service == "Dataflow" {
				d.add(l.Item, l.Shown, priceText(l.Price), Money(l.List))
			}
		}
		b.WriteString(d.String())
	}
	return b.String()
}

func sensitivityTable(base Inputs, rep Report) (string, error) {
	t := table{head: []string{"change", "Firestore", "Cloud Run", "BigQuery", "total (after free usage)", "total (list)"}}
	row := func(name string, r Report) error {
		fs, err := serviceTotals(r.Bill, "Firestore")
		if err != nil {
			return err
		}
		run, err := serviceTotals(r.Bill, "Cloud Run")
		if err != nil {
			return err
		}
		bq, err := serviceTotals(r.Bill, "BigQuery")
		if err != nil {
			return err
		}
		t.add(name, Money(fs[1]), Money(run[1]), Money(bq[1]), Money(r.Bill.Total), Money(r.Bill.List))
		return nil
	}
	if err := row("as above", rep); err != nil {
		return "", err
	}
	for _, v := range Variants() {
		in, err := VariantInputs(base, v)
		if err != nil {
			return "", err
		}
		r, err := Compute(in)
		if err != nil {
			return "", fmt.Errorf("variant %s: %w", v.Name, err)
		}
		name := v.Change
		if v.Scenario != nil {
			name += " (measured)"
		}
		if err := row(name, r); err != nil {
			return "", err
		}
	}
	return t.String(), nil
}

func pricesTable(p Prices) string {
	t := table{head: []string{"price", "value", "source", "read", "note"}}
	for _, e := range []struct {
		name string
		p    Price
	}{
		{"Firestore document reads", p.FirestoreRead}, {"Firestore document writes", p.FirestoreWrite},
		{"Firestore document deletes", p.FirestoreDelete}, {"Firestore storage", p.FirestoreStorage},
		{"Cloud Run CPU", p.CloudRunCPU}, {"Cloud Run memory", p.CloudRunMemory}, {"Cloud Run requests", p.CloudRunRequests},
		{"Pub/Sub throughput", p.PubSubThroughput}, {"Cloud Scheduler", p.SchedulerJob},
		{"BigQuery storage", p.BigQueryStorage}, {"BigQuery streaming inserts", p.BigQueryStreaming}, {"BigQuery on-demand queries", p.BigQueryQuery},
		{"Cloud Storage Standard", p.StorageStandard}, {"Cloud Storage Class A", p.StorageClassA}, {"Cloud Storage Class B", p.StorageClassB},
		{"Dataflow vCPU", p.DataflowVCPU}, {"Dataflow memory", p.DataflowMemory}, {"Dataflow disk", p.DataflowDisk},
		{"Dataflow Streaming Engine", p.DataflowStreamingEngine},
	} {
		assumed := ""
		if e.p.Assumed {
			assumed = "**assumed**: "
		}
		t.add(e.name, priceText(e.p), e.p.Source, e.p.Read, assumed+e.p.Note)
	}
	f := p.Free
	t.add("free usage", fmt.Sprintf("Firestore %s reads, %s writes, %s deletes a day, %d GiB; Cloud Run %s vCPU-s, %s GiB-s, %s requests a month; Pub/Sub %d GiB; Scheduler %d jobs; BigQuery %d GiB stored, %d TiB queried",
		Num(ri(f.FirestoreReadsPerDay), 0), Num(ri(f.FirestoreWritesPerDay), 0), Num(ri(f.FirestoreDeletesPerDay), 0), f.FirestoreStorageGiB,
		Num(ri(f.CloudRunVCPUSeconds), 0), Num(ri(f.CloudRunGiBSeconds), 0), Num(ri(f.CloudRunRequests), 0), f.PubSubGiB, f.SchedulerJobs,
		f.BigQueryStorGiB, f.BigQueryQueryTiB), f.Source, ReadOn+" (stored copies)", "per billing account, except Firestore's (the project's (default) database); TTL deletes get none")
	return t.String()
}

func assumptionsTable(in Inputs) string {
	a, v := in.Assume, in.Volume
	t := table{head: []string{"assumption", "value"}}
	t.add("month", fmt.Sprintf("%d days; stored data priced as it stands after %d months", v.DaysPerMonth, v.RetainedMonths))
	t.add("export", fmt.Sprintf("%d a day of %s lines, %s bytes kept in the landing bucket", v.FilesPerDay, Num(ri(v.LinesPerFile), 0), Num(ri(v.BytesPerFile), 0)))
	t.add("Firestore round trip (same region)", a.FirestoreRPC.String())
	t.add("BigQuery insertAll call", a.InsertAll.String())
	t.add("per file: transfers / load job / refresh jobs", fmt.Sprintf("%v / %v / %v", a.FileTransfer, a.LoadJobWait, a.RefreshWait))
	t.add("Cloud Run instance", fmt.Sprintf("%d vCPU, %d MiB, request-based billing, requests not overlapping, rounded up to %v", a.VCPU, a.MemoryMiB, a.Granularity))
	t.add("Pub/Sub bytes billed per publish and per push", Num(ri(a.PubSubMinBytes), 0)+" at least")
	t.add("dashboard", dashboardText(in))
	t.add("Firestore storage", fmt.Sprintf("dedup records kept %d days, %d bytes of overhead per document", a.DedupDays, a.DocOverhead))
	t.add("Cloud Storage operations per file besides those measured", fmt.Sprintf("%d Class A (ERP upload, staged NDJSON), %d Class B (load job)", a.ExtraClassAPerFile, a.ExtraClassBPerFile))
	t.add("Dataflow job", fmt.Sprintf("%d workers of %d vCPU and %s GB, always on; %d GB disk each without Streaming Engine, %d GB with it; Streaming Engine processes each message byte %d times",
		a.DataflowWorkers, a.DataflowVCPUs, Num(frac(a.DataflowMemoryMB, 1000), 2), a.DataflowDiskGB, a.DataflowSEDiskGB, a.DataflowSEPerByte))
	return t.String()
}

// dashboardText states the dashboard's queries: the pages open around the
// clock, how often they refresh and what each refresh reads.
func dashboardText(in Inputs) string {
	a := in.Assume
	u := usage(in)
	var views []string
	for _, table := range u.DashboardTables {
		views = append(views, viewOf(in.Recorded.Scenario.Specs, table))
	}
	pages := fmt.Sprintf("one page open around the clock on the view %s (the page shows one aggregation at a time, ?aggregation=; of the views, the one that costs the most to scan)", strings.Join(views, ", "))
	if a.DashboardEachView {
		pages = fmt.Sprintf("one page per aggregation open around the clock (views %s)", strings.Join(views, ", "))
	}
	rng := DurationText(a.DashboardRange)
	bound := fmt.Sprintf("the last %s (window_start >= now - %s: at most %d daily partitions of its panes)", rng, rng, a.DashboardDaysScanned)
	summaryBound := fmt.Sprintf("received_at >= now - %s, at most %d daily partitions", rng, a.DashboardDaysScanned)
	if a.DashboardDaysScanned == 0 {
		bound = "no bound on window_start (every retained day of its panes)"
		summaryBound = "no bound on received_at, every retained day"
	}
	return fmt.Sprintf("%s, refreshing every %s (%s refreshes a day); each refresh two queries: the view over %s, and the discard summary, which reads pedidos_descartados (%s; counted at whole rows) and the %s view over the same window_start range; each table a query reads billed at least %s MiB",
		pages, DurationText(a.DashboardRefresh), Num(u.DashboardRefreshesPerDay, 0), bound, summaryBound, warehouse.VentasHoraPais, Num(frac(a.MinQueryBytes, mib), 0))
}

// DurationText writes d in its largest whole unit, as the prose does:
// "24 hours", "5 minutes", "5 seconds"; other durations as Go prints them.
func DurationText(d time.Duration) string {
	for _, u := range []struct {
		d    time.Duration
		name string
	}{{time.Hour, "hour"}, {time.Minute, "minute"}, {time.Second, "second"}} {
		if d <= 0 || d%u.d != 0 {
			continue
		}
		if n := d / u.d; n != 1 {
			return fmt.Sprintf("%d %ss", n, u.name)
		}
		return "1 " + u.name
	}
	return d.String()
}

// viewOf names the view (the aggregation) of a panes table.
func viewOf(specs []window.Spec, table string) string {
	for _, sp := range specs {
		if aggregation.PanesTable(sp.Name) == table {
			return sp.Name
		}
	}
	return table
}

var blockRE = regexp.MustCompile(`(?s)<!-- cost:([a-z-]+) -->\n.*?<!-- /cost:([a-z-]+) -->`)

// FillDoc replaces every generated block of doc with its content in
// blocks. It fails on a block the document lacks or names that do not
// match, and on a block the document has but blocks does not.
func FillDoc(doc string, blocks map[string]string) (string, error) {
	var errs []error
	seen := map[string]bool{}
	out := blockRE.ReplaceAllStringFunc(doc, func(m string) string {
		sm := blockRE.FindStringSubmatch(m)
		name := sm[1]
		if sm[2] != name {
			errs = append(errs, fmt.Errorf("block %s is closed as %s", name, sm[2]))
			return m
		}
		body, ok := blocks[name]
		if !ok {
			errs = append(errs, fmt.Errorf("the document has a block %s the model does not render", name))
			return m
		}
		seen[name] = true
		return "<!-- cost:" + name + " -->\n" + body + "<!-- /cost:" + name + " -->"
	})
	for name := range blocks {
		if !seen[name] {
			errs = append(errs, fmt.Errorf("the document has no block %s", name))
		}
	}
	return out, errors.Join(errs...)
}
