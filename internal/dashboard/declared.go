package dashboard

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/alpinashop/alpipe/internal/aggregation"
	"github.com/alpinashop/alpipe/internal/numeric"
	"github.com/alpinashop/alpipe/internal/window"
)

// WindowDecl is the chosen aggregation's window as declared: the page
// draws fixed windows as bars and sliding ones as a series over window end,
// since overlapping windows hold the same orders and must never be added;
// sessions as bars, one per live session (the view leaves MERGED ones out).
type WindowDecl struct {
	Kind          string `json:"kind"` // fixed, sliding or session
	SizeSeconds   int64  `json:"size_seconds"`
	PeriodSeconds int64  `json:"period_seconds"` // = size for fixed windows, = gap for sessions
	GapSeconds    int64  `json:"gap_seconds,omitempty"`
}

// declared is what the page takes from an aggregation's declaration.
type declared struct {
	key    string
	window WindowDecl
	spec   window.Spec
}

func declarationOf(name string) (declared, error) {
	if err := checkAggregation(name); err != nil {
		return declared{}, err
	}
	d, err := aggregation.Lookup(name)
	if err != nil {
		return declared{}, fmt.Errorf("read declaration: %w", err)
	}
	s := d.Spec()
	w := WindowDecl{Kind: "fixed", SizeSeconds: int64(s.WindowSize / time.Second), PeriodSeconds: int64(s.PeriodOrSize() / time.Second)}
	switch {
	case s.Sliding():
		w.Kind = "sliding"
	case s.Session():
		// A session's bar takes a gap's slot: a key's sessions start at
		// least a gap apart.
		w = WindowDecl{Kind: "session", SizeSeconds: int64(s.Gap / time.Second), PeriodSeconds: int64(s.Gap / time.Second), GapSeconds: int64(s.Gap / time.Second)}
	}
	return declared{key: d.Key, spec: s, window: w}, nil
}

// MaxPickerKeys bounds the key picker's choices: the largest keys of the
// range shown, by sales.
const MaxPickerKeys = MaxKeys

// pickerKeys are the key picker's choices: the keys of the bars, the
// largest sum of sales over the range first (for sliding windows each order
// counts in every window holding it, the same number of times for every
// key, so the order is that of the sales), then the other keys the
// warehouse named (countries) and those the filter chose, alphabetically;
// at most MaxPickerKeys, the chosen ones always among them.
func pickerKeys(bars []Bar, others, chosen []string) []string {
	sums := map[string]numeric.Dec{}
	for _, b := range bars {
		s, err := sums[b.Pais].Add(b.Importe)
		if err != nil {
			s = numeric.Max() // a sum beyond NUMERIC is the largest there is
		}
		sums[b.Pais] = s
	}
	out := make([]string, 0, len(sums))
	for k := range sums {
		out = append(out, k)
	}
	slices.SortFunc(out, func(a, b string) int { return cmp.Or(sums[b].Cmp(sums[a]), cmp.Compare(a, b)) })
	rest := slices.Concat(others, chosen)
	slices.Sort(rest)
	for _, k := range slices.Compact(rest) {
		if _, ok := sums[k]; !ok {
			out = append(out, k)
		}
	}
	if len(out) <= MaxPickerKeys {
		return out
	}
	kept := out[:MaxPickerKeys:MaxPickerKeys]
	for _, k := range chosen {
		if !slices.Contains(kept, k) {
			kept = append(kept, k)
		}
	}
	return kept
}
