package duckdb

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// loadMemory is what one Load in flight takes of DuckDB's memory (its
// unwritten row group, the read_csv buffer, the insert): four 260,000-row
// Loads overran 64MB, three fitted; this leaves room for a query beside.
const loadMemory = 24 << 20

// loadSlots is how many Loads may run at once: as many as the memory limit
// holds, and no more than DuckDB's threads plus a producer keep busy.
func loadSlots(memoryLimit int64, threads int) int {
	return max(1, min(int(memoryLimit/loadMemory), threads+1))
}

func (w *Warehouse) acquire(ctx context.Context) (release func(), err error) {
	select {
	case w.slots <- struct{}{}:
		return func() { <-w.slots }, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for a load slot (%d loads run at once): %w", cap(w.slots), context.Cause(ctx))
	}
}

// memoryLimit reads DuckDB's effective memory limit in bytes (the option
// also takes "50%").
func (w *Warehouse) memoryLimit(ctx context.Context) (int64, error) {
	var s string
	if err := w.db.QueryRowContext(ctx, "SELECT current_setting('memory_limit')").Scan(&s); err != nil {
		return 0, fmt.Errorf("memory limit: %w", err)
	}
	n, err := parseSize(s)
	if err != nil {
		return 0, fmt.Errorf("memory limit: %w", err)
	}
	return n, nil
}

// parseSize reads DuckDB's rendering of a size: "61.0 MiB", "512 bytes".
func parseSize(s string) (int64, error) {
	num, unit, ok := strings.Cut(strings.TrimSpace(s), " ")
	if !ok {
		return 0, fmt.Errorf("size %q has no unit", s)
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, fmt.Errorf("size %q: %w", s, err)
	}
	scale := map[string]float64{
		"bytes": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40, "PiB": 1 << 50,
		"KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12, "PB": 1e15,
	}[unit]
	if scale == 0 {
		return 0, fmt.Errorf("size %q: unknown unit %q", s, unit)
	}
	return int64(f * scale), nil
}
