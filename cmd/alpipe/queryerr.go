package main

import (
	"errors"
	"regexp"
	"strings"

	"github.com/alpinashop/alpipe/internal/client"
)

// engineClass is the prefix DuckDB puts before its message ("Parser Error:
// ", "Catalog Error: "), after the warehouse's own "query: ".
var engineClass = regexp.MustCompile(`^(query: )?([A-Z][a-zA-Z]* )?Error: `)

// personal turns a query the server refused into the reason on one line
// and, on lines of their own, what the engine showed under it (the SQL
// line and the caret pointing at the fault). Other errors pass unchanged.
func personal(err error) error {
	var qe *client.QueryError
	if !errors.As(err, &qe) {
		return err
	}
	msg := strings.TrimPrefix(qe.Msg, "query: ")
	msg = engineClass.ReplaceAllString(msg, "")
	first, rest, _ := strings.Cut(msg, "\n")
	var detail []string
	for _, l := range strings.Split(rest, "\n") {
		if strings.TrimSpace(l) != "" {
			detail = append(detail, "  "+strings.TrimRight(l, " \t\r"))
		}
	}
	return &detailError{msg: strings.TrimSpace(first), detail: strings.Join(detail, "\n"), cause: err}
}
