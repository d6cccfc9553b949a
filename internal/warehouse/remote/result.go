package remote

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/alpinashop/alpipe/internal/warehouse"
)

// writeResult renders a query answer as {"columns":[...],"rows":[[...]]},
// every cell as appendString spells it, so that text that is not UTF-8 (a
// BLOB rendered as a string) comes back byte for byte, and nil slices stay
// nil. It streams: a large answer is not copied again into one buffer.
func writeResult(w io.Writer, r warehouse.Result) error {
	bw := bufio.NewWriterSize(w, 32<<10)
	buf := append([]byte(nil), `{"columns":`...)
	buf = appendStrings(buf, r.Columns)
	buf = append(buf, `,"rows":`...)
	if r.Rows == nil {
		buf = append(buf, "null"...)
	} else {
		buf = append(buf, '[')
		for i, row := range r.Rows {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = appendStrings(buf, row)
			if len(buf) >= 16<<10 {
				if _, err := bw.Write(buf); err != nil {
					return err
				}
				buf = buf[:0]
			}
		}
		buf = append(buf, ']')
	}
	buf = append(buf, '}', '\n')
	if _, err := bw.Write(buf); err != nil {
		return err
	}
	return bw.Flush()
}

func appendStrings(dst []byte, ss []string) []byte {
	if ss == nil {
		return append(dst, "null"...)
	}
	dst = append(dst, '[')
	for i, s := range ss {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendString(dst, s)
	}
	return append(dst, ']')
}

// textCell is one cell of a query answer on the wire.
type textCell string

func (c *textCell) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '{' {
		var o struct {
			Base64 *string `json:"base64"`
		}
		if err := json.Unmarshal(b, &o); err != nil {
			return err
		}
		if o.Base64 == nil {
			return errors.New(`cell object without "base64"`)
		}
		raw, err := base64.StdEncoding.DecodeString(*o.Base64)
		if err != nil {
			return fmt.Errorf("base64 cell: %w", err)
		}
		*c = textCell(raw)
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	*c = textCell(s)
	return nil
}

// readResult decodes what writeResult wrote.
func readResult(r io.Reader) (warehouse.Result, error) {
	var wire struct {
		Columns []textCell   `json:"columns"`
		Rows    [][]textCell `json:"rows"`
	}
	if err := json.NewDecoder(r).Decode(&wire); err != nil {
		return warehouse.Result{}, err
	}
	res := warehouse.Result{Columns: texts(wire.Columns)}
	if wire.Rows != nil {
		res.Rows = make([][]string, len(wire.Rows))
		for i, row := range wire.Rows {
			res.Rows[i] = texts(row)
		}
	}
	return res, nil
}

func texts(cells []textCell) []string {
	if cells == nil {
		return nil
	}
	out := make([]string, len(cells))
	for i, c := range cells {
		out[i] = string(c)
	}
	return out
}
