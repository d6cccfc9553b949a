package warehouse

import (
	"time"

	"github.com/alpinashop/alpipe/internal/numeric"
)

// Type is a column type, named as BigQuery names it.
type Type string

// The column types the warehouse tables use.
const (
	String    Type = "STRING"
	Int64     Type = "INT64"
	Numeric   Type = "NUMERIC"
	Date      Type = "DATE"
	Timestamp Type = "TIMESTAMP"
)

// Value is one typed cell. Exactly the field matching the column's Type is
// meaningful; Null marks a missing value (for a NULLABLE column). It is a
// plain struct, not an interface, so a row of values costs no allocation per
// cell on the ingest hot path.
type Value struct {
	Null bool
	Str  string      // STRING
	Int  int64       // INT64
	Dec  numeric.Dec // NUMERIC
	Days int32       // DATE: days since 1970-01-01
	Time time.Time   // TIMESTAMP (UTC)
}

// StringValue, IntValue, DecValue, DateValue and TimeValue build a Value.
func StringValue(s string) Value   { return Value{Str: s} }
func IntValue(n int64) Value       { return Value{Int: n} }
func DecValue(d numeric.Dec) Value { return Value{Dec: d} }
func DateValue(days int32) Value   { return Value{Days: days} }
func TimeValue(t time.Time) Value  { return Value{Time: t.UTC()} }
func NullValue() Value             { return Value{Null: true} }
func DayTime(days int32) time.Time { return time.Unix(int64(days)*86400, 0).UTC() }
func FormatDate(days int32) string { return DayTime(days).Format(time.DateOnly) }

// DateOf returns the UTC calendar day of t as days since 1970-01-01.
func DateOf(t time.Time) int32 {
	s := t.Unix()
	d := s / 86400
	if s%86400 < 0 {
		d-- // floor, so instants before 1970 land on their own day
	}
	return int32(d) //nolint:gosec // calendar dates fit easily
}
