package localapi

import (
	"errors"
	"fmt"
	"strings"
)

// Statements splits sql at the semicolons that end statements (not those
// inside a string, a quoted name, a comment or a $$-quoted body) and
// returns the statements that hold more than blanks and comments, trimmed.
// The query endpoint runs one statement: a trailing ';' or comment is not a
// second one, "SELECT 1; SELECT 2" is.
func Statements(sql string) []string {
	var out []string
	start, i := 0, 0
	empty := true // only blanks and comments since start
	flush := func(end int) {
		if !empty {
			out = append(out, strings.TrimSpace(sql[start:end]))
		}
		start, empty = end+1, true
	}
	for i < len(sql) {
		c := sql[i]
		switch {
		case c == ';':
			flush(i)
			i++
		case c == '-' && strings.HasPrefix(sql[i:], "--"):
			if n := strings.IndexByte(sql[i:], '\n'); n >= 0 {
				i += n + 1
			} else {
				i = len(sql)
			}
		case c == '/' && strings.HasPrefix(sql[i:], "/*"):
			if n := strings.Index(sql[i+2:], "*/"); n >= 0 {
				i += n + 4
			} else {
				i = len(sql)
			}
		case c == '\'' || c == '"':
			empty = false
			i = skipQuoted(sql, i, c)
		case c == '$':
			empty = false
			i = skipDollar(sql, i)
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		default:
			empty = false
			i++
		}
	}
	flush(len(sql))
	return out
}

// skipQuoted returns the index after the quote that closes the one at i
// (a doubled quote is part of the text).
func skipQuoted(s string, i int, q byte) int {
	for j := i + 1; j < len(s); j++ {
		if s[j] == q {
			if j+1 < len(s) && s[j+1] == q {
				j++
				continue
			}
			return j + 1
		}
	}
	return len(s)
}

// skipDollar skips a $tag$...$tag$ body starting at i; a '$' that opens
// none (a parameter, $1) is one character.
func skipDollar(s string, i int) int {
	j := i + 1
	for j < len(s) && (s[j] == '_' || s[j] >= 'a' && s[j] <= 'z' || s[j] >= 'A' && s[j] <= 'Z' || j > i+1 && s[j] >= '0' && s[j] <= '9') {
		j++
	}
	if j >= len(s) || s[j] != '$' {
		return i + 1
	}
	tag := s[i : j+1]
	if n := strings.Index(s[j+1:], tag); n >= 0 {
		return j + 1 + n + len(tag)
	}
	return len(s)
}

// OneStatement returns the one statement of sql without its trailing ';'
// and comments, or an error a person can act on when sql holds several
// (DuckDB's own words for that name a Go API) or none.
func OneStatement(sql string) (string, error) {
	st := Statements(sql)
	switch len(st) {
	case 1:
		return st[0], nil
	case 0:
		return "", errors.New("no statement: the SQL holds only blanks, comments or ';'")
	default:
		return "", fmt.Errorf("one statement at a time: this SQL holds %d statements separated by ';'; send them one by one", len(st))
	}
}
