package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// thousands writes an integer with comma grouping: 1800015 -> 1,800,015.
func thousands[T ~int | ~int64](n T) string {
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

// column kinds decide alignment and number rendering in text tables.
type kind int

const (
	kindText kind = iota
	kindInt
	kindDecimal // exact NUMERIC/DECIMAL: money, printed with two decimals at least
	kindFloat
	kindCode // an integer that identifies: right-aligned, not grouped
)

// kindOf maps a warehouse type name (DuckDB's DESCRIBE, or BigQuery's) to
// how its values print.
func kindOf(typ string) kind {
	t := strings.ToUpper(typ)
	switch {
	case strings.HasPrefix(t, "DECIMAL"), strings.HasPrefix(t, "NUMERIC"), strings.HasPrefix(t, "BIGNUMERIC"):
		return kindDecimal
	case strings.Contains(t, "INT"):
		return kindInt
	case t == "DOUBLE", t == "FLOAT", t == "REAL", t == "FLOAT64":
		return kindFloat
	}
	return kindText
}

// cell renders one value for a text table.
func cell(v string, k kind) string {
	if v == "NULL" || v == "" {
		return v
	}
	switch k {
	case kindInt:
		if _, err := strconv.ParseInt(v, 10, 64); err == nil {
			return groupDigits(v)
		}
	case kindDecimal:
		return groupDigits(twoDecimals(v))
	case kindFloat:
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			return groupDigits(strconv.FormatFloat(f, 'f', -1, 64))
		}
	}
	return v
}

// twoDecimals pads a decimal string to at least two fraction digits
// (89.9 -> 89.90) without rounding away any digit it has.
func twoDecimals(v string) string {
	i, f, _ := strings.Cut(v, ".")
	for len(f) < 2 {
		f += "0"
	}
	return i + "." + f
}

// writeTable prints rows under a header, numbers right-aligned.
func writeTable(w io.Writer, header []string, rows [][]string, kinds []kind) error {
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
			right := i < len(kinds) && kinds[i] != kindText
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
