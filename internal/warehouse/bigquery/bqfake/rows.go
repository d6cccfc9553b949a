package bqfake

import (
	"bytes"
	"cmp"
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
func compareSchema(want []warehouse.Field, got *bq.TableSchema) string {
	if got == nil || len(got.Fields) != len(want) {
		return fmt.Sprintf("Table has %d fields, the load another number.", len(want))
	}
	for i, w := range want {
		g := got.Fields[i]
		mode := cmp.Or(g.Mode, "NULLABLE")
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

// CheckRow checks one JSON row against a table schema as BigQuery does,
// and returns it as Rows gives it.
func CheckRow(schema []warehouse.Field, line []byte) (map[string]any, error) {
	var raw map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(line))
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("not a JSON object: %v", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("more than one JSON value on the line")
	}
	out := make(map[string]any, len(schema))
	for _, f := range schema {
		v, present := raw[f.Name]
		if !present || string(v) == "null" {
			if f.Required() {
				return nil, fmt.Errorf("Missing required field: %s.", f.Name)
			}
			out[f.Name] = nil
			continue
		}
		val, err := checkValue(f.Type, v)
		if err != nil {
			return nil, fmt.Errorf("field %s: %v", f.Name, err)
		}
		out[f.Name] = val
	}
	for name := range raw {
		if _, ok := out[name]; !ok {
			return nil, fmt.Errorf("no such field: %s.", name)
		}
	}
	return out, nil
}

var (
	intText     = regexp.MustCompile(`^-?[0-9]+$`)
	decimalText = regexp.MustCompile(`^[+-]?([0-9]+)(?:\.([0-9]*))?$`)
	// BigQuery's canonical TIMESTAMP, up to six fractional digits, zone optional.
	timestampText = regexp.MustCompile(`^\d{4}-\d{1,2}-\d{1,2}[ T]\d{1,2}:\d{2}:\d{2}(\.\d{1,6})?( ?(Z|UTC|[+-]\d{2}:\d{2}))?$`)
)

func checkValue(typ warehouse.Type, v json.RawMessage) (any, error) {
	s := string(v)
	quoted := len(v) > 0 && v[0] == '"'
	if quoted && json.Unmarshal(v, &s) != nil {
		return nil, fmt.Errorf("invalid JSON string %s", v)
	}
	switch {
	case typ != warehouse.Int64 && typ != warehouse.Numeric && !quoted:
		return nil, fmt.Errorf("Cannot convert value to %s: %s", typ, v)
	case typ == warehouse.String:
		return s, nil
	case typ == warehouse.Int64:
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || !intText.MatchString(s) {
			return nil, fmt.Errorf("Could not parse '%s' as INT64", s)
		}
		return n, nil
	case typ == warehouse.Numeric: // unquoted is accepted, but lossy for some values: the adapter sends strings
		m := decimalText.FindStringSubmatch(s)
		if m == nil || len(strings.TrimLeft(m[1], "0")) > 29 || len(m[2]) > 9 {
			return nil, fmt.Errorf("Invalid NUMERIC value: %s", s)
		}
		r, _ := new(big.Rat).SetString(s)
		return r, nil
	case typ == warehouse.Date:
		if _, err := time.Parse(time.DateOnly, s); err != nil {
			return nil, fmt.Errorf("Invalid date: '%s'", s)
		}
		return s, nil
	case typ == warehouse.Timestamp:
		if !timestampText.MatchString(s) {
			return nil, fmt.Errorf("Invalid timestamp: '%s'", s)
		}
		return s, nil
	}
	return nil, fmt.Errorf("this fake has no type %s", typ)
}
