package contract

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"github.com/alpinashop/alpipe/internal/numeric"
	"github.com/alpinashop/alpipe/internal/warehouse/schema"
)

// Reject says why a row was refused. The zero value means the row is valid.
type Reject struct {
	// Code is stable and low-cardinality, for metrics: one of RejectCodes
	// or "<column>:<rule>" (Feed.RejectCodes). out_of_partition_range is a
	// date_column value BigQuery's DAY partitioning cannot place, which
	// would fail the whole file's load job.
	Code string
	// Detail is a sentence for the person reading the quarantine file.
	Detail string
}

func (r Reject) OK() bool { return r.Code == "" }

// The dates a DAY-partitioned table accepts in its partitioning column.
var firstPartitionDay, lastPartitionDay = mustDate(schema.FirstPartitionDate), mustDate(schema.LastPartitionDate)

func mustDate(s string) int32 {
	d, ok := parseDate([]byte(s))
	if !ok {
		panic("contract: bad date constant " + s)
	}
	return d
}

const (
	CodeColumnCount   = "column_count"
	CodeInvalidUTF8   = "invalid_utf8"
	CodeInvalidCP1252 = "invalid_windows1252"
	// CodeNUL: a NUL byte is text in no encoding an ERP writes, BigQuery's
	// CSV loader cuts values at it, and it is how a truncated or corrupt
	// write shows; the row is refused wherever the byte sits.
	CodeNUL = "nul_byte"
)

// Validate checks and normalises one data row. On success it fills
// out[:Width()] in table column order with strings independent of fields;
// otherwise it returns the first reason found (column count, encoding, each
// column in declared order, derived columns) and out is garbage.
//
// The success path runs per row of every file: no fmt, maps or regexps
// (unless declared), and no string allocated per row (see slab).
func (b *Binding) Validate(fields [][]byte, out []schema.Value) Reject {
	if len(fields) != b.columns {
		return Reject{CodeColumnCount, fmt.Sprintf("expected %d columns, got %d", b.columns, len(fields))}
	}
	f := b.feed
	vals := fields
	// One invalid byte fails a whole BigQuery load job, so it must stop
	// here, even in a column the contract ignores. Most values are plain
	// ASCII, which one pass tells.
	for i, v := range fields {
		if plainText(v) {
			continue
		}
		if bytes.IndexByte(v, 0) >= 0 {
			return Reject{CodeNUL, fmt.Sprintf("column %d (%s): NUL byte in %s", i+1, b.names[i], quote(v))}
		}
		if f.charset == nil && !utf8.Valid(v) {
			return Reject{CodeInvalidUTF8, fmt.Sprintf("column %d (%s): invalid UTF-8 %s", i+1, b.names[i], quote(v))}
		}
	}
	if f.charset != nil {
		if r := b.transcode(fields); !r.OK() {
			return r
		}
		vals = b.vals
	}
	b.arena = b.arena[:0]
	for ci := range f.columns {
		c := &f.columns[ci]
		var v []byte
		if p := b.pos[ci]; p >= 0 {
			v = vals[p]
		}
		if c.trim {
			v = trimSpace(v)
		}
		b.spans[ci].start = -1
		if len(v) == 0 {
			if c.required {
				return Reject{c.codeRequired, c.name + ": required value is empty"}
			}
			out[ci] = schema.Value{Null: true}
			continue
		}
		var r Reject
		switch c.typ {
		case schema.String:
			r = b.stringValue(ci, c, v, out)
		case schema.Int64:
			r = c.integer(v, &out[ci])
		case schema.Numeric:
			r = c.decimal(v, &out[ci], &b.num)
		case schema.Date:
			r = c.date(v, &out[ci])
		}
		if !r.OK() {
			return r
		}
	}
	for di := range f.derived {
		d := &f.derived[di]
		if r := d.compute(out, len(f.columns)+di); !r.OK() {
			return r
		}
	}
	if len(b.arena) > 0 {
		s := b.strs.cut(b.arena)
		for ci, sp := range b.spans {
			if sp.start >= 0 {
				out[ci] = schema.Value{Str: s[sp.start:sp.end]}
			}
		}
	}
	return Reject{}
}

// trimSpace is bytes.TrimSpace with a shortcut for nothing to trim.
func trimSpace(v []byte) []byte {
	if n := len(v); n == 0 || (v[0] > ' ' && v[0] < utf8.RuneSelf && v[n-1] > ' ' && v[n-1] < utf8.RuneSelf) {
		return v
	}
	return bytes.TrimSpace(v)
}

// transcode decodes every field into b.vals, leaving fields alone: a
// rejected row goes to the quarantine in its original bytes.
func (b *Binding) transcode(fields [][]byte) Reject {
	cs := b.feed.charset
	b.text = b.text[:0]
	for i, v := range fields {
		if plainText(v) { // no NUL is left: Validate checked
			b.ends[i] = -1
			continue
		}
		var ok bool
		if b.text, ok = cs.append(b.text, v); !ok {
			return Reject{cs.code, fmt.Sprintf("column %d (%s): byte undefined in %s %s", i+1, b.names[i], cs.name, quote(v))}
		}
		b.ends[i] = len(b.text)
	}
	// Slice only now: appending may have moved text.
	start := 0
	for i, v := range fields {
		if b.ends[i] < 0 {
			b.vals[i] = v
			continue
		}
		b.vals[i] = b.text[start:b.ends[i]:b.ends[i]]
		start = b.ends[i]
	}
	return Reject{}
}

// stringValue normalises and checks a STRING value into the row arena, which
// becomes strings once the whole row is valid.
func (b *Binding) stringValue(ci int, c *column, v []byte, out []schema.Value) Reject {
	start := len(b.arena)
	switch {
	case c.upper:
		b.arena = appendCase(b.arena, v, 'a', 'z', unicode.ToUpper)
	case c.lower:
		b.arena = appendCase(b.arena, v, 'A', 'Z', unicode.ToLower)
	default:
		b.arena = append(b.arena, v...)
	}
	s := b.arena[start:]
	if c.truncateRunes > 0 {
		s = cutRunes(s, c.truncateRunes)
		b.arena = b.arena[:start+len(s)]
	}
	if c.maxRunes > 0 {
		if n := utf8.RuneCount(s); n > c.maxRunes {
			return Reject{c.codeTooLong, fmt.Sprintf("%s: %d characters, at most %d allowed", c.name, n, c.maxRunes)}
		}
	}
	if c.countries {
		code := country(s)
		if code == "" {
			return Reject{c.codeSet, fmt.Sprintf("%s: %s is not an ISO 3166-1 alpha-2 country code", c.name, quote(s))}
		}
		b.arena = b.arena[:start] // the interned code needs no copy
		out[ci] = schema.Value{Str: code}
		return Reject{}
	}
	if c.pattern != nil && !c.pattern.Match(s) {
		return Reject{c.codePattern, fmt.Sprintf("%s: %s does not match %s", c.name, quote(s), c.pattern)}
	}
	if c.allowedValues != nil {
		for _, a := range c.allowedValues {
			if string(s) == a {
				b.arena = b.arena[:start]
				out[ci] = schema.Value{Str: a}
				return Reject{}
			}
		}
		return Reject{c.codeSet, fmt.Sprintf("%s: %s is not one of %q", c.name, quote(s), c.allowedValues)}
	}
	b.spans[ci] = span{start, len(b.arena)}
	return Reject{}
}

func (c *column) integer(v []byte, out *schema.Value) Reject {
	n, ok, inRange := parseInt(v)
	if !ok {
		return Reject{c.codeInvalid, fmt.Sprintf("%s: not an integer %s", c.name, quote(v))}
	}
	if !inRange {
		return Reject{c.codeRange, fmt.Sprintf("%s: integer out of range %s", c.name, quote(v))}
	}
	if c.min.set && (n < c.min.i || c.min.exclusive && n == c.min.i) {
		return Reject{c.codeBelow, fmt.Sprintf("%s: must be %s, got %d", c.name, c.min.text, n)}
	}
	if c.max.set && (n > c.max.i || c.max.exclusive && n == c.max.i) {
		return Reject{c.codeAbove, fmt.Sprintf("%s: must be %s, got %d", c.name, c.max.text, n)}
	}
	*out = schema.Value{Int: n}
	return Reject{}
}

func (c *column) decimal(v []byte, out *schema.Value, scratch *[]byte) Reject {
	// The Spanish ERP writes 89,90, other exports 89.90: a declared
	// decimal_comma accepts both, but never both in one value (1.089,90).
	comma := c.decimalComma && bytes.IndexByte(v, ',') >= 0
	var d numeric.Dec
	var err error
	if c.thousands != 0 && bytes.IndexByte(v, c.thousands) >= 0 {
		var r Reject
		if d, r, err = c.grouped(v, comma, scratch); !r.OK() {
			return r
		}
	} else {
		d, err = numeric.Parse(v, comma)
	}
	if err != nil {
		switch {
		case errors.Is(err, numeric.ErrPrecision):
			return Reject{c.codePrecision, fmt.Sprintf("%s: more than %d decimal places %s", c.name, numeric.Scale, quote(v))}
		case errors.Is(err, numeric.ErrOverflow):
			return Reject{c.codeRange, fmt.Sprintf("%s: number outside NUMERIC's range (%d integer digits, %d decimals) %s", c.name, numeric.Precision-numeric.Scale, numeric.Scale, quote(v))}
		}
		return Reject{c.codeInvalid, fmt.Sprintf("%s: not a decimal number %s", c.name, quote(v))}
	}
	if c.min.set && (d.Cmp(c.min.d) < 0 || c.min.exclusive && d == c.min.d) {
		return Reject{c.codeBelow, fmt.Sprintf("%s: must be %s, got %s", c.name, c.min.text, d)}
	}
	if c.max.set && (d.Cmp(c.max.d) > 0 || c.max.exclusive && d == c.max.d) {
		return Reject{c.codeAbove, fmt.Sprintf("%s: must be %s, got %s", c.name, c.max.text, d)}
	}
	*out = schema.Value{Dec: d}
	return Reject{}
}

// grouped parses a number holding the feed's thousands separator; scratch
// is the binding's buffer for the ungrouped digits.
func (c *column) grouped(v []byte, comma bool, scratch *[]byte) (numeric.Dec, Reject, error) {
	if !comma && c.thousands == '.' && bytes.Count(v, []byte{'.'}) == 1 {
		// 1.234 is a thousand and more in the ERP's locale and a bit more
		// than one elsewhere; money is not guessed. 89.90 is not ambiguous.
		if len(v)-bytes.IndexByte(v, '.')-1 == 3 {
			return numeric.Dec{}, Reject{c.codeInvalid, fmt.Sprintf("%s: ambiguous number %s: write the decimal comma (1.234,00) or no grouping", c.name, quote(v))}, nil
		}
		d, err := numeric.Parse(v, false)
		return d, Reject{}, err
	}
	u, ok := ungroup((*scratch)[:0], v, c.thousands)
	*scratch = u
	if !ok {
		return numeric.Dec{}, Reject{c.codeInvalid, fmt.Sprintf("%s: thousands not grouped in threes %s", c.name, quote(v))}, nil
	}
	d, err := numeric.Parse(u, comma)
	return d, Reject{}, err
}

func (c *column) date(v []byte, out *schema.Value) Reject {
	days, ok := parseDate(v)
	for i := 0; !ok && i < len(c.dates); i++ {
		days, ok = c.dates[i].parse(v)
	}
	if !ok {
		return Reject{c.codeInvalid, fmt.Sprintf("%s: invalid date %s", c.name, quote(v))}
	}
	if c.partition && (days < firstPartitionDay || days > lastPartitionDay) {
		return Reject{c.codePartition, fmt.Sprintf("%s: %s is outside the warehouse's daily partitions %s..%s", c.name, quote(v), schema.FirstPartitionDate, schema.LastPartitionDate)}
	}
	*out = schema.Value{Days: days}
	return Reject{}
}

// quote renders a value for a detail, shortened: the raw line is beside it.
func quote(v []byte) string {
	const limit = 64
	if len(v) > limit {
		return strconv.Quote(string(v[:limit])) + "..."
	}
	return strconv.Quote(string(v))
}

// slabBytes is about a hundred rows' strings: one allocation serves them,
// and a string kept long after its row pins no more than this.
const slabBytes = 4 << 10

// slab hands out strings cut from a byte slice that is only ever appended
// to (a full one is replaced, not reused): the bytes under a string never
// change, as unsafe.String asks.
type slab struct{ buf []byte }

func (s *slab) cut(p []byte) string {
	if len(p) > cap(s.buf)-len(s.buf) {
		s.buf = make([]byte, 0, max(slabBytes, len(p)))
	}
	n := len(s.buf)
	s.buf = append(s.buf, p...)
	return unsafe.String(&s.buf[n], len(p))
}
