package cost

import (
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestCatalogueShares: the default catalogue has the skew docs/cost.md
// states, the 80/20 of a shop's sales.
func TestCatalogueShares(t *testing.T) {
	sc, err := DefaultScenario()
	if err != nil {
		t.Fatal(err)
	}
	cat := newCatalogue(sc.Catalogue)
	for _, tc := range []struct {
		name string
		top  int
		want string
	}{
		{"the flagship", 1, "11.6%"},
		{"the top 20%", sc.Catalogue.SKUs / 5, "81.3%"},
		{"everything", sc.Catalogue.SKUs, "100.0%"},
		{"nothing", 0, "0.0%"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, pct1(cat.share(tc.top))); diff != "" {
				t.Errorf("share of the first %d SKUs (-want +got):\n%s", tc.top, diff)
			}
		})
	}
	if diff := cmp.Diff([]string{"MOCH-40L-AZ", "ART-03000"}, []string{cat.names[0], cat.names[len(cat.names)-1]}); diff != "" {
		t.Errorf("first and last SKU (-want +got):\n%s", diff)
	}
}

// TestPickSKUs: orders get the scenario's lines on average, each of a
// distinct SKU, and the SKUs come in the catalogue's proportions.
func TestPickSKUs(t *testing.T) {
	sc, err := DefaultScenario()
	if err != nil {
		t.Fatal(err)
	}
	s := &simulation{sc: sc, rng: rand.New(rand.NewPCG(1, 2)), skus: newCatalogue(sc.Catalogue)}
	const orders = 100_000
	var lines, flagship int64
	for range orders {
		ranks := s.pickSKUs()
		if len(ranks) < 1 || len(ranks) > 5 {
			t.Fatalf("an order of %d lines, want 1 to 5", len(ranks))
		}
		sorted := slices.Clone(ranks)
		slices.Sort(sorted)
		if len(slices.Compact(sorted)) != len(ranks) {
			t.Fatalf("an order repeats a SKU: %v", ranks)
		}
		lines += int64(len(ranks))
		if slices.Contains(ranks, 0) {
			flagship++
		}
	}
	for _, b := range []struct {
		name   string
		got    *big.Rat
		lo, hi *big.Rat
	}{
		{"lines an order", frac(lines, orders), big.NewRat(228, 100), big.NewRat(232, 100)},
		// Distinct SKUs per order lower the flagship's share of lines a
		// little below its weight (11.6%).
		{"flagship's share of the lines", frac(flagship, lines), big.NewRat(100, 1000), big.NewRat(120, 1000)},
	} {
		if b.got.Cmp(b.lo) < 0 || b.got.Cmp(b.hi) > 0 {
			t.Errorf("%s = %s, want within [%s, %s]", b.name, b.got.FloatString(4), b.lo.FloatString(3), b.hi.FloatString(3))
		}
	}
}
