package contract

import "github.com/alpinashop/alpipe/internal/record"

// Reject codes of records the CSV reader could not split into fields.
const (
	CodeMalformed = "malformed_record"
	// CodeUnterminatedQuote: a quote opened on the row's line does not
	// close into a well-formed record. The row is that one physical line,
	// and the lines after it were read as rows of their own (package
	// record states the rule), so fixing the line and re-queueing it
	// restores the row.
	CodeUnterminatedQuote = "unterminated_quote"
)

// Unreadable is the reject of a record the reader could not split:
// record.Record.Problem is set.
func Unreadable(problem string) Reject {
	if problem == record.ProblemUnterminatedQuote {
		return Reject{CodeUnterminatedQuote, problem + ": the quote opened on this line does not close into a well-formed record; the lines after it are read as rows of their own"}
	}
	return Reject{CodeMalformed, problem}
}
