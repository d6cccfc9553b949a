package warehouse

import (
	"time"

	"github.com/alpinashop/alpipe/internal/numeric"
	"github.com/alpinashop/alpipe/internal/warehouse/schema"
)

// The names of package schema, where the tables and values are declared,
// as the rest of the code knows them.
type (
	Type  = schema.Type
	Value = schema.Value
	Field = schema.Field
	Table = schema.Table
)

const (
	String    = schema.String
	Int64     = schema.Int64
	Numeric   = schema.Numeric
	Date      = schema.Date
	Timestamp = schema.Timestamp

	FirstPartitionDate = schema.FirstPartitionDate
	LastPartitionDate  = schema.LastPartitionDate
)

func StringValue(s string) Value   { return schema.StringValue(s) }
func IntValue(n int64) Value       { return schema.IntValue(n) }
func DecValue(d numeric.Dec) Value { return schema.DecValue(d) }
func DateValue(days int32) Value   { return schema.DateValue(days) }
func TimeValue(t time.Time) Value  { return schema.TimeValue(t) }
func NullValue() Value             { return schema.NullValue() }
func DayTime(days int32) time.Time { return schema.DayTime(days) }
func FormatDate(days int32) string { return schema.FormatDate(days) }
func DateOf(t time.Time) int32     { return schema.DateOf(t) }

func SameValue(t Type, a, b *Value) bool { return schema.SameValue(t, a, b) }
