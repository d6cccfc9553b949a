package contract

import (
	"fmt"
	"regexp"

	"github.com/alpinashop/alpipe/internal/numeric"
	"github.com/alpinashop/alpipe/internal/warehouse/schema"
)

const (
	UTF8        = "utf-8"
	Windows1252 = "windows-1252"
	ISO88591    = "iso-8859-1"
)

// What a feed does with header columns it does not declare
// (on_unknown_columns).
const (
	// UnknownLoad loads the declared columns and records the others as drift.
	UnknownLoad = "load"
	// UnknownReject rejects the file: for feeds where an ERP change must
	// stop the load until the contract says what the column means.
	UnknownReject = "reject"
)

// Feed is one compiled contract. It is immutable and safe for concurrent use;
// per-file state lives in Binding.
type Feed struct {
	name        string
	description string
	table       string
	encoding    string
	charset     *charset // nil for UTF-8
	dialect     Dialect
	onUnknown   string
	objects     *regexp.Regexp
	columns     []column  // declared, in table order
	derived     []derived // computed, in table order after the declared ones
	header      []string
	dateIndex   int
	aggregates  []string
	rules       map[string]string // column -> its rules in words, for people
}

type column struct {
	name     string
	typ      schema.Type
	required bool

	trim, upper, lower, decimalComma bool
	truncateRunes                    int
	thousands                        byte         // grouping separator accepted with decimalComma, 0 if none
	dates                            []dateLayout // formats tried after ISO

	min, max      bound
	maxRunes      int
	countries     bool     // ISO 3166-1 alpha-2
	allowedValues []string // small sets: a linear scan beats a map
	pattern       *regexp.Regexp
	// partition: the feed's date_column, which partitions its table by DAY,
	// so a date BigQuery cannot place in a partition must not reach a load.
	partition bool

	// Reject codes, built once so that a reject costs no string building
	// beyond its detail.
	codeRequired, codeInvalid, codeRange, codePrecision     string
	codeBelow, codeAbove, codeSet, codePattern, codeTooLong string
	codePartition                                           string
}

// bound is an inclusive or exclusive limit on a number.
type bound struct {
	set       bool
	exclusive bool
	i         int64       // INT64 columns
	d         numeric.Dec // NUMERIC columns
	text      string      // "> 0", ">= 1", "<= 5", for details
}

// derived is a column computed from two declared numeric columns.
type derived struct {
	name      string
	typ       schema.Type
	required  bool
	op        byte // '*', '+' or '-'
	a, b      int  // indexes of the operands in the output row
	ta, tb    schema.Type
	expr      string
	codeRange string
	codeReq   string
}

func (f *Feed) Name() string { return f.name }

func (f *Feed) Description() string { return f.description }

func (f *Feed) Table() string { return f.table }

// Encoding returns the source text encoding: UTF8, Windows1252 or ISO88591.
func (f *Feed) Encoding() string { return f.encoding }

func (f *Feed) OnUnknownColumns() string { return f.onUnknown }

// Header returns the declared column names in declared order, the header a
// corrected file is re-queued with.
func (f *Feed) Header() []string { return append([]string(nil), f.header...) }

// Width returns the number of values Validate writes: declared and derived
// columns, without the lineage columns.
func (f *Feed) Width() int { return len(f.columns) + len(f.derived) }

func (f *Feed) Aggregates() []string { return append([]string(nil), f.aggregates...) }

// DateIndex returns the output index of the date column that aggregates are
// keyed by, or -1.
func (f *Feed) DateIndex() int { return f.dateIndex }

// Schema returns the table columns the feed produces as BigQuery would
// declare them, without descriptions: declared, derived, then the lineage
// columns, which the ingester fills.
func (f *Feed) Schema() []schema.Field {
	out := make([]schema.Field, 0, f.Width()+4)
	for _, c := range f.columns {
		out = append(out, schema.Field{Name: c.name, Type: c.typ, Mode: mode(c.required)})
	}
	for _, d := range f.derived {
		out = append(out, schema.Field{Name: d.name, Type: d.typ, Mode: mode(d.required)})
	}
	return append(out, schema.Field{Name: "source_object", Type: schema.String, Mode: "REQUIRED"},
		schema.Field{Name: "source_generation", Type: schema.Int64, Mode: "REQUIRED"},
		schema.Field{Name: "source_line", Type: schema.Int64, Mode: "REQUIRED"},
		schema.Field{Name: "ingested_at", Type: schema.Timestamp, Mode: "REQUIRED"})
}

func mode(required bool) string {
	if required {
		return "REQUIRED"
	}
	return "NULLABLE"
}

// CheckTable reports the first difference between the feed's Schema and the
// table's: name, type and mode, column by column.
func (f *Feed) CheckTable(t schema.Table) error {
	want := f.Schema()
	for i, w := range want {
		if i >= len(t.Schema) {
			return fmt.Errorf("contract: feed %s: column %s: table %s has only %d columns", f.name, w.Name, t.Name, len(t.Schema))
		}
		g := t.Schema[i]
		if g.Name != w.Name || g.Type != w.Type || g.Mode != w.Mode {
			return fmt.Errorf("contract: feed %s: column %d is %s %s %s, table %s has %s %s %s",
				f.name, i+1, w.Name, w.Type, w.Mode, t.Name, g.Name, g.Type, g.Mode)
		}
	}
	if len(t.Schema) > len(want) {
		return fmt.Errorf("contract: feed %s: table %s has extra column %s", f.name, t.Name, t.Schema[len(want)].Name)
	}
	return nil
}
