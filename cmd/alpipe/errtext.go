package main

import (
	"errors"
	"strings"
)

// detailError is an error with a block that only makes sense on lines of
// its own (DuckDB's SQL line with a caret under the fault): Error is the
// one-line reason, Detail the block that main prints under it verbatim.
type detailError struct {
	msg    string
	detail string
	cause  error
}

func (e *detailError) Error() string  { return e.msg }
func (e *detailError) Detail() string { return e.detail }
func (e *detailError) Unwrap() error  { return e.cause }

// errorText is what main prints after "alpipe: ": the error on one line,
// and under it the detail of an error that carries one.
func errorText(err error) string {
	s := oneLine(err)
	var d interface{ Detail() string }
	if errors.As(err, &d) && strings.TrimSpace(d.Detail()) != "" {
		s += "\n" + strings.TrimRight(d.Detail(), "\n")
	}
	return s
}
