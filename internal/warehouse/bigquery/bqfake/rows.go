package bqfake

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"time"

	bq "google.golang.org/api/bigquery/v2"

	"github.com/alpinashop/alpipe/internal/warehouse"
)

// compareSchema returns why a load schema differs from the table's, or "".
// BigQuery names INT64 INTEGER on the wire and takes an empty mode as
// NULLABLE; both spellings are accepted.
func compareSchema(want []warehouse.Field, got *bq.TableSchema) string {
	if got == nil {
		return "The load has no schema."
	}
	if len(got.Fields) != len(want) {
		return fmt.Sprintf("Table has %d fields, the load %d.", len(want), len(got.Fields))
	}
	for i, w := range want {
		g := got.Fields[i]
		mode := g.Mode
		if mode == "" {
			mode = "NULLABLE"
		}
		if g.Name != w.Name || normalType(g.Type) != normalType(string(w.Type)) || mode != w.Mode {
			return fmt.Sprintf("Field %d is %s %s %s, the table has %s %s %s.", i, g.Name, g.Type, mode, w.Name, w.Type, w.Mode)
		}
	}
	return ""
}

func normalType(t string) string {
	switch t {
	case "INTEGER":
		return "INT64"
	case "FLOAT":
		return "FLOAT64"
	case "BOOLEAN":
		return "BOOL"
	}
	return t
}

// checkJSONRow parses one JSON row and checks it against the schema as a
// JSON load or insertAll does. It returns the row with each value in a
// canonical Go form: string, int64, *big.Rat (NUMERIC), DATE and TIMESTAMP
// as their text, nil for NULL.
func checkJSONRow(schema []warehouse.Field, line []byte) (map[string]any, error) {
	var raw map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(line))
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("not a JSON object: %v", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("more than one JSON value on the line")
	}
	known := map[string]bool{}
	out := make(map[string]any, len(schema))
	for _, f := range schema {
		known[f.Name] = true
		v, present := raw[f.Name]
		if !present || string(v) == "null" {
			if f.Required() {
				return nil, fmt.Errorf("Missing required field: %s.", f.Name)
			}
			out[f.Name] = nil
			continue
		}
		val, err := checkJSONValue(f.Type, v)
		if err != nil {
			return nil, fmt.Errorf("field %s: %v", f.Name, err)
		}
		out[f.Name] = val
	}
	for name := range raw {
		if !known[name] {
			return nil, fmt.Errorf("no such field: %s.", name)
		}
	}
	return out, nil
}

var (
	intText     = regexp.MustCompile(`^-?[0-9]+$`)
	decimalText = regexp.MustCompile(`^[+-]?([0-9]+)(?:\.([0-9]*))?$`)
	// BigQuery's canonical TIMESTAMP: date, ' ' or 'T', time with up to six
	// fractional digits, and a zone (Z, UTC or ±hh:mm), or no zone (UTC).
	timestampText = regexp.MustCompile(`^\d{4}-\d{1,2}-\d{1,2}[ T]\d{1,2}:\d{2}:\d{2}(\.\d{1,6})?( ?(Z|UTC|[+-]\d{2}:\d{2}))?$`)
)

func checkJSONValue(typ warehouse.Type, v json.RawMessage) (any, error) {
	var s string
	quoted := len(v) > 0 && v[0] == '"'
	if quoted {
		if err := json.Unmarshal(v, &s); err != nil {
			return nil, err
		}
	}
	switch typ {
	case warehouse.String:
		if !quoted {
			return nil, fmt.Errorf("Cannot convert value to string: %s", v)
		}
		return s, nil
	case warehouse.Int64:
		if !quoted {
			s = string(v)
		}
		if !intText.MatchString(s) {
			return nil, fmt.Errorf("Could not parse '%s' as INT64", s)
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("Could not parse '%s' as INT64: out of range", s)
		}
		return n, nil
	case warehouse.Numeric:
		if !quoted {
			s = string(v) // accepted, but lossy for some values: the adapter sends strings
		}
		m := decimalText.FindStringSubmatch(s)
		if m == nil || len(strings.TrimLeft(m[1], "0")) > 29 || len(m[2]) > 9 {
			return nil, fmt.Errorf("Invalid NUMERIC value: %s", s)
		}
		r, _ := new(big.Rat).SetString(s)
		return r, nil
	case warehouse.Date:
		if !quoted {
			return nil, fmt.Errorf("Invalid date: %s", v)
		}
		if _, err := time.Parse(time.DateOnly, s); err != nil {
			return nil, fmt.Errorf("Invalid date: '%s'", s)
		}
		return s, nil
	case warehouse.Timestamp:
		if !quoted {
			return nil, fmt.Errorf("this fake expects TIMESTAMP as a string, got %s", v)
		}
		if !timestampText.MatchString(s) {
			return nil, fmt.Errorf("Invalid timestamp: '%s'", s)
		}
		return s, nil
	}
	return nil, fmt.Errorf("this fake has no type %s", typ)
}

// CheckRow checks one JSON row (an NDJSON line, an insertAll row) against
// a table schema as BigQuery does, and returns it in the form Rows gives.
func CheckRow(schema []warehouse.Field, line []byte) (map[string]any, error) {
	return checkJSONRow(schema, line)
}
