package contract

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/alpinashop/alpipe/internal/numeric"
	"github.com/alpinashop/alpipe/internal/warehouse/schema"
)

// declaration is the JSON form of a feed, one file in feeds/.
//
//	{
//	  "feed": "lineas_pedido",                  // name: [a-z][a-z0-9_]*
//	  "description": "...",
//	  "objects": "^exportaciones/...\\.csv$",   // Go regexp on the object name
//	  "table": "lineas_pedido",                 // warehouse table
//	  "encoding": "utf-8", ...                  // how files are written: docs/feeds.md
//	  "columns": [ ... ],                       // in table order
//	  "derived": [ ... ],                       // in table order, after columns
//	  "date_column": "fecha",                   // DATE column aggregates are keyed by
//	  "aggregates": ["ventas_diarias_sku"]      // daily tables rebuilt from this feed
//	}
//
// A column:
//
//	{"name": "cantidad", "type": "INT64", "required": true,
//	 "normalize": ["trim"],           // trim, upper, lower, decimal_comma
//	 "min": 1, "max": 5,              // inclusive bounds (INT64, NUMERIC)
//	 "greater_than": 0, "less_than": 10,  // exclusive bounds
//	 "pattern": "^[A-Z0-9-]+$",       // STRING, after normalisation
//	 "allowed_set": "iso3166-1-alpha2",   // a named set (STRING)
//	 "allowed_values": ["a", "b"],    // an inline set (STRING)
//	 "max_runes": 100,                // reject longer values (STRING)
//	 "truncate_runes": 500}           // cut longer values (STRING)
//
// A derived column: {"name": "importe", "type": "NUMERIC", "required": true,
// "expr": "cantidad * precio_unitario"}, where expr is "<column> <op>
// <column>" with op one of * + - over declared INT64 or NUMERIC columns,
// computed exactly (overflow rejects the row).
type declaration struct {
	Feed        string        `json:"feed"`
	Description string        `json:"description"`
	Objects     string        `json:"objects"`
	Table       string        `json:"table"`
	Encoding    string        `json:"encoding"`
	Delimiter   delimiterDecl `json:"delimiter"`
	Quote       string        `json:"quote"`
	// ThousandsSeparator and DateFormats are feed-wide: an ERP writes every
	// column in one locale.
	ThousandsSeparator string        `json:"thousands_separator"`
	DateFormats        []string      `json:"date_formats"`
	OnUnknownColumns   string        `json:"on_unknown_columns"`
	Columns            []columnDecl  `json:"columns"`
	Derived            []derivedDecl `json:"derived"`
	DateColumn         string        `json:"date_column"`
	Aggregates         []string      `json:"aggregates"`
}

type columnDecl struct {
	Name          string      `json:"name"`
	Type          string      `json:"type"`
	Required      bool        `json:"required"`
	Normalize     []string    `json:"normalize"`
	Min           json.Number `json:"min"`
	Max           json.Number `json:"max"`
	GreaterThan   json.Number `json:"greater_than"`
	LessThan      json.Number `json:"less_than"`
	Pattern       string      `json:"pattern"`
	AllowedSet    string      `json:"allowed_set"`
	AllowedValues []string    `json:"allowed_values"`
	MaxRunes      int         `json:"max_runes"`
	TruncateRunes int         `json:"truncate_runes"`
}

type derivedDecl struct {
	Name     string `json:"name"`
	Type     string `json:"type"`
	Required bool   `json:"required"`
	Expr     string `json:"expr"`
}

// Named sets for allowed_set.
const setISO3166 = "iso3166-1-alpha2"

var (
	feedName   = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
	columnName = regexp.MustCompile(`^[a-z_][a-z0-9_]*$`) // BigQuery's rule, lower-case only
)

// compile decodes and checks one declaration. Errors name the feed and the
// column at fault.
func compile(b []byte) (*Feed, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields() // a misspelt rule must not be silently ignored
	var d declaration
	if err := dec.Decode(&d); err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	if dec.More() {
		return nil, errors.New("decode: trailing data after the declaration")
	}
	if !feedName.MatchString(d.Feed) {
		return nil, fmt.Errorf("feed name %q must match %s", d.Feed, feedName)
	}
	f := &Feed{name: d.Feed, description: d.Description, table: d.Table, dateIndex: -1}
	fail := func(format string, a ...any) error {
		return fmt.Errorf("feed %s: "+format, append([]any{f.name}, a...)...)
	}
	if d.Table == "" {
		return nil, fail("no table")
	}
	if d.Objects == "" {
		return nil, fail("no objects pattern")
	}
	re, err := regexp.Compile(d.Objects)
	if err != nil {
		return nil, fail("objects pattern: %w", err)
	}
	f.objects = re
	f.rules = describeRules(d.Columns, d.Derived)
	f.encoding, f.charset = d.Encoding, charsets[d.Encoding]
	if f.charset == nil && d.Encoding != UTF8 {
		return nil, fail("encoding %q: want %q, %q or %q", d.Encoding, UTF8, Windows1252, ISO88591)
	}
	if f.dialect, err = compileDialect(d); err != nil {
		return nil, fail("%w", err)
	}
	f.onUnknown = cmp.Or(d.OnUnknownColumns, UnknownLoad)
	if f.onUnknown != UnknownLoad && f.onUnknown != UnknownReject {
		return nil, fail("on_unknown_columns %q: want %q or %q", d.OnUnknownColumns, UnknownLoad, UnknownReject)
	}
	if len(d.Columns) == 0 {
		return nil, fail("no columns")
	}
	index := map[string]int{}
	for _, cd := range d.Columns {
		c, err := compileColumn(cd, f.dialect)
		if err != nil {
			return nil, fail("column %s: %w", cd.Name, err)
		}
		if _, dup := index[c.name]; dup {
			return nil, fail("column %s: declared twice", c.name)
		}
		index[c.name] = len(f.columns)
		f.columns = append(f.columns, c)
		f.header = append(f.header, c.name)
	}
	if f.dialect.thousands != 0 && !slices.ContainsFunc(f.columns, func(c column) bool { return c.decimalComma }) {
		return nil, fail("thousands_separator: applies to NUMERIC columns normalised with decimal_comma, and none is")
	}
	for _, dd := range d.Derived {
		dc, err := compileDerived(dd, f.columns, index)
		if err != nil {
			return nil, fail("derived column %s: %w", dd.Name, err)
		}
		if _, dup := index[dc.name]; dup {
			return nil, fail("derived column %s: declared twice", dc.name)
		}
		index[dc.name] = len(f.columns) + len(f.derived)
		f.derived = append(f.derived, dc)
	}
	if d.DateColumn != "" {
		i, ok := index[d.DateColumn]
		if !ok || i >= len(f.columns) || f.columns[i].typ != schema.Date {
			return nil, fail("date_column %s: not a declared DATE column", d.DateColumn)
		}
		if !f.columns[i].required {
			return nil, fail("date_column %s: must be required, aggregates are keyed by it", d.DateColumn)
		}
		f.dateIndex = i
		f.columns[i].partition = true
		f.columns[i].codePartition = f.columns[i].name + ":out_of_partition_range"
	}
	if len(d.Aggregates) > 0 && f.dateIndex < 0 {
		return nil, fail("aggregates need a date_column")
	}
	f.aggregates = append([]string(nil), d.Aggregates...)
	return f, nil
}

func compileColumn(d columnDecl, dl Dialect) (column, error) {
	if !columnName.MatchString(d.Name) {
		return column{}, fmt.Errorf("name must match %s", columnName)
	}
	c := column{name: d.Name, typ: schema.Type(d.Type), required: d.Required}
	switch c.typ {
	case schema.String, schema.Int64, schema.Numeric, schema.Date:
	default:
		return column{}, fmt.Errorf("type %q: want STRING, INT64, NUMERIC or DATE", d.Type)
	}
	str := c.typ == schema.String
	for _, n := range d.Normalize {
		switch {
		case n == "trim":
			c.trim = true
		case n == "upper" && str:
			c.upper = true
		case n == "lower" && str:
			c.lower = true
		case n == "decimal_comma" && c.typ == schema.Numeric:
			c.decimalComma = true
		default:
			return column{}, fmt.Errorf("normalisation %q does not apply to %s", n, c.typ)
		}
	}
	if c.decimalComma {
		c.thousands = dl.thousands
	}
	if c.typ == schema.Date {
		c.dates = dl.dates
	}
	if c.upper && c.lower {
		return column{}, errors.New("upper and lower exclude each other")
	}
	var err error
	if c.min, err = parseBound(c.typ, d.Min, d.GreaterThan, ">=", ">"); err != nil {
		return column{}, err
	}
	if c.max, err = parseBound(c.typ, d.Max, d.LessThan, "<=", "<"); err != nil {
		return column{}, err
	}
	if !str && (d.Pattern != "" || d.AllowedSet != "" || d.AllowedValues != nil || d.MaxRunes != 0 || d.TruncateRunes != 0) {
		return column{}, fmt.Errorf("pattern, allowed_set, allowed_values, max_runes and truncate_runes apply to STRING, not %s", c.typ)
	}
	if d.Pattern != "" {
		if c.pattern, err = regexp.Compile(d.Pattern); err != nil {
			return column{}, fmt.Errorf("pattern: %w", err)
		}
	}
	switch d.AllowedSet {
	case "":
	case setISO3166:
		c.countries = true
	default:
		return column{}, fmt.Errorf("allowed_set %q: known sets: %s", d.AllowedSet, setISO3166)
	}
	if d.AllowedValues != nil {
		if len(d.AllowedValues) == 0 {
			return column{}, errors.New("allowed_values is empty")
		}
		c.allowedValues = append([]string(nil), d.AllowedValues...)
	}
	if d.MaxRunes < 0 || d.TruncateRunes < 0 {
		return column{}, errors.New("max_runes and truncate_runes must be positive")
	}
	c.maxRunes, c.truncateRunes = d.MaxRunes, d.TruncateRunes
	code := func(s string) string { return c.name + ":" + s }
	c.codeRequired, c.codeRange, c.codePrecision = code("required"), code("out_of_range"), code("too_precise")
	c.codeBelow, c.codeAbove, c.codePattern = code("below_min"), code("above_max"), code("pattern")
	c.codeTooLong, c.codeSet = code("too_long"), code("not_allowed")
	if c.countries {
		c.codeSet = code("not_iso3166")
	}
	switch c.typ {
	case schema.Int64:
		c.codeInvalid = code("invalid_int")
	case schema.Numeric:
		c.codeInvalid = code("invalid_numeric")
	case schema.Date:
		c.codeInvalid = code("invalid_date")
	}
	return c, nil
}

// parseBound reads an inclusive or an exclusive limit; declaring both is an
// error.
func parseBound(t schema.Type, incl, excl json.Number, inclOp, exclOp string) (bound, error) {
	if incl != "" && excl != "" {
		return bound{}, fmt.Errorf("both %s and %s bounds declared", inclOp, exclOp)
	}
	text, op := string(incl), inclOp
	b := bound{}
	if excl != "" {
		text, op, b.exclusive = string(excl), exclOp, true
	}
	if text == "" {
		return bound{}, nil
	}
	b.set = true
	b.text = op + " " + text
	switch t {
	case schema.Int64:
		n, err := strconv.ParseInt(text, 10, 64)
		if err != nil {
			return bound{}, fmt.Errorf("bound %s: not an INT64", b.text)
		}
		b.i = n
	case schema.Numeric:
		d, err := numeric.Parse(text, false)
		if err != nil {
			return bound{}, fmt.Errorf("bound %s: %w", b.text, err)
		}
		b.d = d
	default:
		return bound{}, fmt.Errorf("bounds apply to INT64 and NUMERIC, not %s", t)
	}
	return b, nil
}

func compileDerived(d derivedDecl, cols []column, index map[string]int) (derived, error) {
	if !columnName.MatchString(d.Name) {
		return derived{}, fmt.Errorf("name must match %s", columnName)
	}
	dc := derived{name: d.Name, typ: schema.Type(d.Type), required: d.Required, expr: d.Expr}
	parts := strings.Fields(d.Expr)
	if len(parts) != 3 || len(parts[1]) != 1 || !strings.Contains("*+-", parts[1]) {
		return derived{}, fmt.Errorf("expr %q: want \"<column> <op> <column>\" with op one of * + -", d.Expr)
	}
	dc.op = parts[1][0]
	resultType := schema.Int64
	for k, name := range []string{parts[0], parts[2]} {
		i, ok := index[name]
		if !ok || i >= len(cols) {
			return derived{}, fmt.Errorf("expr %q: %s is not a declared column", d.Expr, name)
		}
		c := cols[i]
		switch c.typ {
		case schema.Numeric:
			resultType = schema.Numeric
		case schema.Int64:
		default:
			return derived{}, fmt.Errorf("expr %q: %s is %s, want INT64 or NUMERIC", d.Expr, name, c.typ)
		}
		if d.Required && !c.required {
			return derived{}, fmt.Errorf("expr %q: required, but %s is optional", d.Expr, name)
		}
		if k == 0 {
			dc.a, dc.ta = i, c.typ
		} else {
			dc.b, dc.tb = i, c.typ
		}
	}
	if dc.typ != resultType {
		return derived{}, fmt.Errorf("type %s: %q is %s", d.Type, d.Expr, resultType)
	}
	dc.codeRange = d.Name + ":out_of_range"
	dc.codeReq = d.Name + ":required"
	return dc, nil
}
