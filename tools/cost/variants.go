package cost

import (
	"fmt"
	"slices"
	"time"

	"github.com/alpinashop/alpipe/internal/dashboard"
	"github.com/alpinashop/alpipe/internal/window"
)

// Variant is one change to the inputs, for the "what would change the
// picture" table. A variant with a Scenario is measured again (the
// recorded measurement keeps it under Name); the others only change the
// model's inputs.
type Variant struct {
	Name     string
	Change   string
	Scenario func(Scenario) Scenario
	Apply    func(*Inputs)
}

// OnlyFirst is the variant that runs the first shipped aggregation alone
// (ventas_hora_pais): the difference to the full bill is what the others
// cost.
const OnlyFirst = "only-first-aggregation"

// Variants are the changes docs/cost.md weighs.
func Variants() []Variant {
	return []Variant{
		{Name: OnlyFirst, Change: "ventas_hora_pais alone (no ventas_sku_hora_movil), the bill before issue 17",
			Scenario: func(s Scenario) Scenario { s.Specs = s.Specs[:1]; return s }},
		{Name: "tick-5min", Change: "a tick every 5 minutes instead of every minute (dashboard up to 5 min behind)",
			Scenario: func(s Scenario) Scenario { s.TickEvery = 5 * time.Minute; return s },
			Apply:    func(in *Inputs) { in.Volume.TickEvery = 5 * time.Minute }},
		{Name: "late-delay-1m", Change: "late delay Ld = 1 min (late corrections batched into the tick)",
			Scenario: func(s Scenario) Scenario { return eachSpec(s, func(sp *window.Spec) { sp.LateDelay = time.Minute }) }},
		{Name: "firestore-eur3", Change: "Firestore in the eur3 multi-region instead of europe-west1",
			Apply: func(in *Inputs) { in.Prices = MultiRegionFirestore(in.Prices) }},
		{Name: "orders-x10", Change: "10x the orders (500,000 a day), per-order counts as measured",
			Apply: func(in *Inputs) { in.Volume.OrdersPerDay *= 10 }},
		{Name: "campaign-es-40", Change: "a campaign day: 500,000 orders, Spain 40% of them (FR 7%), measured again",
			Scenario: func(s Scenario) Scenario {
				s.OrdersPerDay = 500_000
				s.Countries = campaign(s.Countries, "ES", 400_000, "FR")
				return s
			},
			Apply: func(in *Inputs) { in.Volume.OrdersPerDay = 500_000 }},
		{Name: "dashboard-2min", Change: "the dashboard refreshed every 2 minutes (720 times a day) instead of every " + DurationText(dashboard.DefaultRefresh),
			Apply: func(in *Inputs) { in.Assume.DashboardRefresh = 2 * time.Minute }},
		{Name: "dashboard-each-view", Change: "two pages: each aggregation's view shown around the clock, each page refreshing (view and discard summary) every " + DurationText(dashboard.DefaultRefresh),
			Apply: func(in *Inputs) { in.Assume.DashboardEachView = true }},
		{Name: "dashboard-before-0e06ebd", Change: "before commit 0e06ebd (for comparison; the page no longer does this): one page refreshing every 5 seconds, its view and discard summary with no window_start / received_at bound",
			Apply: func(in *Inputs) {
				in.Assume.DashboardRefresh = 5 * time.Second
				in.Assume.DashboardDaysScanned = 0
			}},
		{Name: "firestore-rtt-30ms", Change: "Firestore round trips of 30 ms instead of 10 ms",
			Apply: func(in *Inputs) { in.Assume.FirestoreRPC = 30 * time.Millisecond }},
	}
}

// eachSpec returns s with change applied to every aggregation.
func eachSpec(s Scenario, change func(*window.Spec)) Scenario {
	s.Specs = slices.Clone(s.Specs)
	for i := range s.Specs {
		change(&s.Specs[i])
	}
	return s
}

// VariantInputs returns base changed by v, with v's recorded measurement
// when it has one.
func VariantInputs(base Inputs, v Variant) (Inputs, error) {
	in := base
	if v.Scenario != nil {
		m, ok := base.Recorded.Variants[v.Name]
		if !ok {
			return Inputs{}, fmt.Errorf("variant %s has no recorded measurement: run the measurement with -update", v.Name)
		}
		in.Stream = m
	}
	if v.Apply != nil {
		v.Apply(&in)
	}
	return in, nil
}

// campaign gives country hot the share want, taking the difference from
// country from, so the shares still add up to one million.
func campaign(cs []Country, hot string, want PerMillion, from string) []Country {
	out := append([]Country(nil), cs...)
	var diff PerMillion
	for i := range out {
		if out[i].Code == hot {
			diff = want - out[i].Share
			out[i].Share = want
		}
	}
	for i := range out {
		if out[i].Code == from {
			out[i].Share -= diff
		}
	}
	return out
}
