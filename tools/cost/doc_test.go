package main

import (
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestDocIsCurrent holds docs/cost.md to what the command prints, so a
// change to a count, an input, a price or the dashboard's constants fails
// here until the doc is regenerated.
func TestDocIsCurrent(t *testing.T) {
	got, err := os.ReadFile("../../docs/cost.md")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(strings.Split(doc(), "\n"), strings.Split(string(got), "\n")); diff != "" {
		t.Errorf("docs/cost.md is not what the command prints: run go run ./tools/cost > docs/cost.md (-want +got):\n%s", diff)
	}
}

func TestMoney(t *testing.T) {
	tests := []struct {
		name string
		qty  int64
		p    price
		want string
	}{
		{name: "reads past the free quota", qty: 5_835_090 - 1_500_000, p: firestoreRead, want: "$1.30"},
		{name: "per second priced in milliseconds", qty: 5_679_000, p: runCPU, want: "$0.14"},
		{name: "a TiB-priced scan in bytes", qty: 809 * gib, p: bqQuery, want: "$4.94"},
		{name: "under half a cent", qty: 90, p: gcsClassA, want: "<$0.01"},
		{name: "nothing", qty: 0, p: gcsClassA, want: "$0.00"},
		{name: "thousands", qty: 1_000_000, p: scheduler, want: "$100,000.00"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := usd(charge(tt.qty, tt.p)); got != tt.want {
				t.Errorf("usd(charge(%d, %+v)) = %s, want %s", tt.qty, tt.p, got, tt.want)
			}
		})
	}
}
