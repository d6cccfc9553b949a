package duckdb

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/warehouse"
)

// capped is a RowCapped sink that keeps the rows and the size refused.
type capped struct {
	warehouse.Collect
	max     int64
	refused int64
}

func (c *capped) MaxRowBytes() int64 { return c.max }

var errTooLarge = errors.New("too large")

func (c *capped) RowTooLarge(size int64) error {
	c.refused = size
	return errTooLarge
}

// TestRowCapKeepsTheAnswer: the cap's wrap keeps an answer within it: its
// column names (repeated ones too) and the order of an ORDER BY.
func TestRowCapKeepsTheAnswer(t *testing.T) {
	w := open(t, filepath.Join(t.TempDir(), "w.duckdb"), Options{Threads: 4})
	ctx := context.Background()

	c := &capped{max: 1 << 20}
	if err := w.QueryRows(ctx, "SELECT 1 AS a, 'x' AS a, NULL AS b, [1, 2] AS l", c); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(warehouse.Result{Columns: []string{"a", "a", "b", "l"}, Rows: [][]string{{"1", "x", "NULL", "[1 2]"}}}, c.Result); diff != "" {
		t.Errorf("answer (-want +got):\n%s", diff)
	}

	const n = 300_000
	c = &capped{max: 1 << 20}
	if err := w.QueryRows(ctx, fmt.Sprintf("SELECT range AS i, 'v' || range AS s FROM range(%d) ORDER BY range DESC", n), c); err != nil {
		t.Fatal(err)
	}
	if len(c.Result.Rows) != n {
		t.Fatalf("%d rows, want %d", len(c.Result.Rows), n)
	}
	for i, r := range c.Result.Rows {
		if want := strconv.Itoa(n - 1 - i); r[0] != want {
			t.Fatalf("row %d is %v, want i %s", i, r, want)
		}
	}
}

// TestRowCapRefusesInTheEngine: a row past the sink's cap ends the query
// with the sink's error and the row's size, over every long column.
func TestRowCapRefusesInTheEngine(t *testing.T) {
	w := open(t, filepath.Join(t.TempDir(), "w.duckdb"), Options{})
	tests := []struct {
		name, sql string
		wantSize  int64 // 0: within the cap
	}{
		{name: "at the cap", sql: "SELECT repeat('x', 100) AS s"},
		{name: "one text cell past it", sql: "SELECT repeat('x', 101) AS s", wantSize: 101},
		{name: "cells under it that pass it together", wantSize: 60 + 30 + 12,
			sql: "SELECT repeat('x', 60) AS a, CAST(repeat('y', 30) AS BLOB) AS b, [repeat('z', 10)] AS l, 123456789 AS n"},
		{name: "a later row", sql: "SELECT repeat('x', CAST(range AS INTEGER)) AS s FROM range(200)", wantSize: 101},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &capped{max: 100}
			err := w.QueryRows(context.Background(), tt.sql, c)
			if tt.wantSize == 0 {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, errTooLarge) || c.refused != tt.wantSize {
				t.Errorf("error %v, size %d; want the sink's error and size %d", err, c.refused, tt.wantSize)
			}
		})
	}
}
