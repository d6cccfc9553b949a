package render

import (
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/alpinashop/alpipe/internal/numeric"
)

// Thousands writes an integer with comma grouping: 1800015 -> 1,800,015.
func Thousands[T ~int | ~int64](n T) string {
	return groupDigits(strconv.FormatInt(int64(n), 10))
}

// groupDigits groups the integer part of a decimal string in threes.
func groupDigits(s string) string {
	sign := ""
	if strings.HasPrefix(s, "-") {
		sign, s = "-", s[1:]
	}
	intPart, frac, hasFrac := strings.Cut(s, ".")
	var b strings.Builder
	for i, c := range intPart {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if hasFrac {
		return sign + b.String() + "." + frac
	}
	return sign + b.String()
}

// MoneyScale is the fraction digits money always shows: cents. Every
// NUMERIC column is DECIMAL(38,9) in both warehouses (BigQuery's scale, so
// that no amount is rounded), and the warehouses answer with the shortest
// exact decimal ("179.8"), so no type carries the scale an amount is
// written in; the renderer restores it.
const MoneyScale = 2

// Scaled pads a decimal string to at least MoneyScale fraction digits
// (179.8 -> 179.80, 25 -> 25.00) without rounding away any digit it has
// (1234567.125 stays). Anything else (NULL, "") is returned as it is.
func Scaled(v string) string {
	if v == "" || v == "NULL" {
		return v
	}
	i, f, _ := strings.Cut(v, ".")
	for len(f) < MoneyScale {
		f += "0"
	}
	return i + "." + f
}

// Money is an exact amount with its scale: 179.80, never 179.8.
func Money(d numeric.Dec) string { return Scaled(d.String()) }

// Kind is how a column's values print.
type Kind int

const (
	Text Kind = iota
	Int
	Decimal // exact NUMERIC/DECIMAL: money, always with its scale
	Float
	Code // an integer that identifies: right-aligned, not grouped
)

// KindOf maps a column's name and warehouse type (DuckDB's DESCRIBE, or
// BigQuery's) to how its values print; an unknown type prints as text.
func KindOf(name, typ string) Kind {
	t := strings.ToUpper(typ)
	switch {
	case strings.HasPrefix(t, "DECIMAL"), strings.HasPrefix(t, "NUMERIC"), strings.HasPrefix(t, "BIGNUMERIC"):
		return Decimal
	case strings.Contains(t, "INT"):
		if identifier.MatchString(name) {
			return Code
		}
		return Int
	case t == "DOUBLE", t == "FLOAT", t == "REAL", t == "FLOAT64":
		return Float
	}
	return Text
}

// Kinds is KindOf for each column; nil types (the warehouse could not say)
// are all text.
func Kinds(names, types []string) []Kind {
	k := make([]Kind, len(types))
	for i, t := range types {
		name := ""
		if i < len(names) {
			name = names[i]
		}
		k[i] = KindOf(name, t)
	}
	return k
}

// identifier matches integer columns that name things rather than count
// them (a generation, a line number, an ID): no thousands separators.
var identifier = regexp.MustCompile(`(?i)(^|_)(id|generation|gen|line|linea|year|anio|code|codigo)$`)

// value is one cell as every format writes it: money with its scale,
// anything else as the warehouse gave it.
func value(v string, k Kind) string {
	if k == Decimal {
		return Scaled(v)
	}
	return v
}

// cell renders one value for a text table: value, with separators in
// quantities and amounts.
func cell(v string, k Kind) string {
	if v == "NULL" || v == "" {
		return v
	}
	switch k {
	case Int:
		if _, err := strconv.ParseInt(v, 10, 64); err == nil {
			return groupDigits(v)
		}
	case Decimal:
		return groupDigits(Scaled(v))
	case Float:
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			return groupDigits(strconv.FormatFloat(f, 'f', -1, 64))
		}
	}
	return v
}

// writeTable prints rows under a header in columns two blanks apart;
// numbers are right-aligned unless left is set.
func writeTable(w io.Writer, header []string, rows [][]string, kinds []Kind, left bool) error {
	width := make([]int, len(header))
	for i, h := range header {
		width[i] = utf8.RuneCountInString(h)
	}
	for _, r := range rows {
		for i, c := range r {
			if i < len(width) {
				width[i] = max(width[i], utf8.RuneCountInString(c))
			}
		}
	}
	line := func(r []string) error {
		var b strings.Builder
		for i, c := range r {
			if i >= len(width) {
				break
			}
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(c))
			right := !left && i < len(kinds) && kinds[i] != Text
			if right {
				b.WriteString(pad + c)
			} else if i < len(r)-1 {
				b.WriteString(c + pad)
			} else {
				b.WriteString(c)
			}
			if i < len(r)-1 {
				b.WriteString("  ")
			}
		}
		_, err := fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
		return err
	}
	if err := line(header); err != nil {
		return err
	}
	for _, r := range rows {
		if err := line(r); err != nil {
			return err
		}
	}
	return nil
}

// Table prints rows under a header for a terminal: columns two blanks
// apart, those whose kind is not Text right-aligned.
func Table(w io.Writer, header []string, rows [][]string, kinds []Kind) error {
	return writeTable(w, header, rows, kinds, false)
}
