package ingest

import (
	"slices"
	"strings"
	"sync"

	"github.com/alpinashop/alpipe/internal/ledger"
)

// Stats counts what this instance ingested, for the local status page; the
// durable figures are in the ledger and the logs.
type Stats struct {
	mu       sync.Mutex
	counters map[string]int64
}

func NewStats() *Stats { return &Stats{counters: map[string]int64{}} }

func (s *Stats) add(name string, n int64) {
	s.mu.Lock()
	s.counters[name] += n
	s.mu.Unlock()
}

func (s *Stats) finished(rec ledger.Record) {
	feed := rec.Feed
	if feed == "" {
		feed = "-"
	}
	s.add("files{feed="+feed+",state="+string(rec.State)+"}", 1)
	s.add("rows_loaded{feed="+feed+"}", rec.Counts.Loaded)
	for code, n := range rec.Counts.Rejects {
		s.add("rows_rejected{feed="+feed+",code="+code+"}", n)
	}
	for _, side := range driftSides(rec.Drift) {
		for _, c := range side.columns {
			s.add("schema_drift{feed="+feed+",change="+side.change+",column="+c+"}", 1)
		}
	}
}

func (s *Stats) failed(feed string) { s.add("attempts_failed{feed="+feed+"}", 1) }

// Snapshot returns the counters, sorted by name.
func (s *Stats) Snapshot() []Counter {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Counter, 0, len(s.counters))
	for k, v := range s.counters {
		out = append(out, Counter{Name: k, Value: v})
	}
	slices.SortFunc(out, func(a, b Counter) int { return strings.Compare(a.Name, b.Name) })
	return out
}

type Counter struct {
	Name  string `json:"name"`
	Value int64  `json:"value"`
}
