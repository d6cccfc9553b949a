package warehouse

import (
	"errors"
	"fmt"
)

// RowSource streams rows in the column order of the target table's schema.
// Row's slice is only valid until the next call to Next, so a source can
// reuse one buffer for the whole file.
type RowSource interface {
	Next() bool
	Row() []Value
	Err() error
}

// Load asks for the rows of one source (a file generation) to be appended
// to Table atomically (see Warehouse). ID identifies the source, not the
// attempt, and is what a BigQuery job ID may hold, so that load job IDs
// derive from it.
type Load struct {
	ID    string
	Table string
	Rows  RowSource
}

// MaxLoadIDLen is the longest Load.ID.
const MaxLoadIDLen = 900

// CheckID accepts what a BigQuery job ID may hold: letters, digits, '_'
// and '-', 1 to max bytes.
func CheckID(s string, max int) error {
	if s == "" {
		return errors.New("empty")
	}
	if len(s) > max {
		return fmt.Errorf("%d bytes, more than %d", len(s), max)
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return fmt.Errorf("byte %q at %d: only letters, digits, '_' and '-' are allowed", c, i)
		}
	}
	return nil
}

// LoadResult says what a Load did.
type LoadResult struct {
	Rows          int64 // rows appended by this call (0 when AlreadyLoaded)
	AlreadyLoaded bool  // the ID had committed before: nothing was appended
}

// Row is a row with a stable identity, for appends that may be retried.
type Row struct {
	ID     string
	Values []Value
}

// Result is a query answer rendered as text, for people and tests.
type Result struct {
	Columns []string
	Rows    [][]string // NULL is rendered as "NULL"
}

// IsPermanent reports whether err is a warehouse failure no retry can fix,
// one with a Permanent() method that says so.
func IsPermanent(err error) bool {
	var p interface{ Permanent() bool }
	return errors.As(err, &p) && p.Permanent()
}

// PermanentError marks err as permanent.
type PermanentError struct{ Err error }

func (e *PermanentError) Error() string   { return e.Err.Error() }
func (e *PermanentError) Unwrap() error   { return e.Err }
func (e *PermanentError) Permanent() bool { return true }
