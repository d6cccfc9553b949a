package contract

import "github.com/alpinashop/alpipe/internal/warehouse/schema"

// RejectCodes lists the reject codes that do not name a column: unreadable
// records, the column count and the text encodings. With each feed's
// Feed.RejectCodes, they are every code Validate and Unreadable return, the
// codes metrics are declared for.
func RejectCodes() []string {
	return []string{
		CodeMalformed, CodeUnterminatedQuote, CodeColumnCount, CodeNUL, CodeInvalidUTF8, CodeInvalidCP1252,
	}
}

// RejectCodes lists the "<column>:<rule>" codes the feed's columns can be
// rejected with, one per rule they declare, in column order.
func (f *Feed) RejectCodes() []string {
	var out []string
	for _, c := range f.columns {
		number := c.typ == schema.Int64 || c.typ == schema.Numeric
		for _, r := range []struct {
			on   bool
			code string
		}{
			{c.required, c.codeRequired}, {c.typ != schema.String, c.codeInvalid}, {number, c.codeRange},
			{c.typ == schema.Numeric, c.codePrecision}, {c.min.set, c.codeBelow}, {c.max.set, c.codeAbove},
			{c.pattern != nil, c.codePattern}, {c.maxRunes > 0, c.codeTooLong},
			{c.countries || c.allowedValues != nil, c.codeSet}, {c.partition, c.codePartition},
		} {
			if r.on {
				out = append(out, r.code)
			}
		}
	}
	for _, d := range f.derived {
		if d.required {
			out = append(out, d.codeReq)
		}
		out = append(out, d.codeRange)
	}
	return out
}
