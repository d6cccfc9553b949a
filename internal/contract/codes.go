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
	add := func(codes ...string) { out = append(out, codes...) }
	for _, c := range f.columns {
		if c.required {
			add(c.codeRequired)
		}
		switch c.typ {
		case schema.Int64:
			add(c.codeInvalid, c.codeRange)
		case schema.Numeric:
			add(c.codeInvalid, c.codeRange, c.codePrecision)
		case schema.Date:
			add(c.codeInvalid)
		}
		if c.min.set {
			add(c.codeBelow)
		}
		if c.max.set {
			add(c.codeAbove)
		}
		if c.pattern != nil {
			add(c.codePattern)
		}
		if c.maxRunes > 0 {
			add(c.codeTooLong)
		}
		if c.countries || c.allowedValues != nil {
			add(c.codeSet)
		}
		if c.partition {
			add(c.codePartition)
		}
	}
	for _, d := range f.derived {
		if d.required {
			add(d.codeReq)
		}
		add(d.codeRange)
	}
	return out
}
