package warehouse

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/alpinashop/alpipe/internal/numeric"
)

// cells reads one row of a Result by column name, collecting errors.
type cells struct {
	cols map[string]int
	vals []string
	errs []string
}

// scan decodes every row of res with f, after checking that the columns
// want are there. Errors name the read, the row and every bad cell.
func scan[T any](read string, res Result, want []string, f func(c *cells) T) ([]T, error) {
	cols := make(map[string]int, len(res.Columns))
	for i, c := range res.Columns {
		cols[c] = i
	}
	for _, c := range want {
		if _, ok := cols[c]; !ok {
			return nil, fmt.Errorf("%s: answer has no column %q (columns %v)", read, c, res.Columns)
		}
	}
	out := make([]T, 0, len(res.Rows))
	for n, vals := range res.Rows {
		if len(vals) != len(res.Columns) {
			return nil, fmt.Errorf("%s row %d: %d cells for %d columns", read, n+1, len(vals), len(res.Columns))
		}
		c := &cells{cols: cols, vals: vals}
		v := f(c)
		if len(c.errs) > 0 {
			return nil, fmt.Errorf("%s row %d: %s", read, n+1, strings.Join(c.errs, "; "))
		}
		out = append(out, v)
	}
	return out, nil
}

func (c *cells) raw(name string) string { return c.vals[c.cols[name]] }

func (c *cells) null(name string) bool { return c.raw(name) == "NULL" }

// str reads a STRING; NULL reads as "".
func (c *cells) str(name string) string {
	if c.null(name) {
		return ""
	}
	return c.raw(name)
}

// int reads an INT64; NULL (a SUM over no rows) reads as 0.
func (c *cells) int(name string) int64 {
	if c.null(name) {
		return 0
	}
	n, err := strconv.ParseInt(c.raw(name), 10, 64)
	if err != nil {
		c.errs = append(c.errs, fmt.Sprintf("%s %q: not an integer", name, c.raw(name)))
	}
	return n
}

// dec reads a NUMERIC exactly, never through a float; NULL reads as 0.
func (c *cells) dec(name string) numeric.Dec {
	if c.null(name) {
		return numeric.Dec{}
	}
	d, err := numeric.Parse(c.raw(name), false)
	if err != nil {
		c.errs = append(c.errs, fmt.Sprintf("%s %q: %v", name, c.raw(name), err))
	}
	return d
}

// time reads a TIMESTAMP in UTC; NULL reads as the zero time.
func (c *cells) time(name string) time.Time {
	if c.null(name) {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339Nano, c.raw(name))
	if err != nil {
		c.errs = append(c.errs, fmt.Sprintf("%s %q: not an RFC 3339 time", name, c.raw(name)))
	}
	return t.UTC()
}

// date reads a DATE as days since 1970-01-01.
func (c *cells) date(name string) int32 {
	d, err := time.Parse(time.DateOnly, c.raw(name))
	if err != nil {
		c.errs = append(c.errs, fmt.Sprintf("%s %q: not a date YYYY-MM-DD", name, c.raw(name)))
	}
	return DateOf(d)
}
