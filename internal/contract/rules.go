package contract

import (
	"fmt"
	"strings"
)

// ObjectPattern is the regular expression of the object names the feed
// owns, as declared.
func (f *Feed) ObjectPattern() string { return f.objects.String() }

// Rules says in words what a column must hold, as declared ("" for an
// unknown column): what `alpipe contracts` shows a person deciding why a
// row was quarantined.
func (f *Feed) Rules(column string) string { return f.rules[column] }

func describeRules(cols []columnDecl, derived []derivedDecl) map[string]string {
	out := make(map[string]string, len(cols)+len(derived))
	for _, c := range cols {
		var r []string
		if c.Required {
			r = append(r, "required")
		}
		r = append(r, c.Normalize...)
		for _, b := range []struct {
			op string
			v  string
		}{{">=", c.Min.String()}, {"<=", c.Max.String()}, {">", c.GreaterThan.String()}, {"<", c.LessThan.String()}} {
			if b.v != "" {
				r = append(r, b.op+" "+b.v)
			}
		}
		if c.Pattern != "" {
			r = append(r, "matches "+c.Pattern)
		}
		if c.AllowedSet != "" {
			r = append(r, "in "+c.AllowedSet)
		}
		if len(c.AllowedValues) > 0 {
			r = append(r, "one of "+strings.Join(c.AllowedValues, ", "))
		}
		if c.MaxRunes > 0 {
			r = append(r, fmt.Sprintf("at most %d characters", c.MaxRunes))
		}
		if c.TruncateRunes > 0 {
			r = append(r, fmt.Sprintf("cut to %d characters", c.TruncateRunes))
		}
		out[c.Name] = strings.Join(r, "; ")
	}
	for _, d := range derived {
		out[d.Name] = "derived: " + d.Expr
	}
	return out
}
