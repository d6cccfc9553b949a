package replay

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"github.com/alpinashop/alpipe/internal/order"
)

// maxLine bounds one JSONL line, as local.ReadSteps does.
const maxLine = 10 << 20

// JSONL reads an orders file in the format of `alpipe publish`
// (local.ReadSteps), line by line, never holding the file:
//
//	{"momento_evento": "...", "pedido": {...}, "llegada": "...", "nota": "..."}
//	{"momento_evento": "...", "pedido_id": "...", ...}   (the order itself)
//	{"tick": "..."}
//
// Ticks and arrival times (llegada) belong to live stories and are ignored:
// a replay decides its watermark itself. Blank lines are skipped; a line
// that is not a JSON object stops the replay with an *InputError. It is
// parsed here rather than with local.ReadSteps, which reads the whole file
// (and package local mounts this package's handler).
type JSONL struct {
	sc   *bufio.Scanner
	line int
}

var _ Source = (*JSONL)(nil)

// NewJSONL reads orders from r.
func NewJSONL(r io.Reader) *JSONL {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	return &JSONL{sc: sc}
}

// Next implements Source.
func (j *JSONL) Next(ctx context.Context) (Message, error) {
	for {
		if err := ctx.Err(); err != nil {
			return Message{}, err
		}
		if !j.sc.Scan() {
			if err := j.sc.Err(); err != nil {
				return Message{}, &InputError{fmt.Errorf("line %d: %w", j.line+1, err)}
			}
			return Message{}, io.EOF
		}
		j.line++
		line := bytes.TrimSpace(j.sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(line, &fields); err != nil {
			return Message{}, &InputError{fmt.Errorf("line %d: %w", j.line, err)}
		}
		if _, ok := fields["tick"]; ok {
			continue
		}
		m := Message{ID: "line " + strconv.Itoa(j.line), Attributes: map[string]string{}}
		if raw, ok := fields[order.EventTimeAttribute]; ok {
			var s string
			if json.Unmarshal(raw, &s) == nil {
				m.Attributes[order.EventTimeAttribute] = s
			}
			delete(fields, order.EventTimeAttribute)
		}
		delete(fields, "llegada")
		delete(fields, "nota")
		if raw, ok := fields["pedido"]; ok {
			m.Data = bytes.Clone(raw)
		} else {
			b, err := json.Marshal(fields)
			if err != nil {
				return Message{}, &InputError{fmt.Errorf("line %d: %w", j.line, err)}
			}
			m.Data = b
		}
		return m, nil
	}
}
