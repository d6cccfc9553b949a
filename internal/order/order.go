// Package order parses and validates the real-time order messages that the
// web application publishes on topic pedidos-nuevos. It is pure: bytes and
// attributes in, an Order or the reason it is invalid out.
package order

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/alpinashop/alpipe/internal/numeric"
)

// EventTimeAttribute is the message attribute holding the event time.
const EventTimeAttribute = "momento_evento"

// Line is one order line.
type Line struct {
	SKU            string      `json:"sku"`
	Cantidad       int64       `json:"cantidad"`
	PrecioUnitario numeric.Dec `json:"precio_unitario"`
}

// Order is a valid order with its event time.
type Order struct {
	PedidoID     string      `json:"pedido_id"`
	ClienteID    string      `json:"cliente_id"`
	Pais         string      `json:"pais"`
	ImporteTotal numeric.Dec `json:"importe_total"`
	Lineas       []Line      `json:"lineas"`
	EventTime    time.Time   `json:"-"`
}

// Field returns the value of a key field by name.
func (o Order) Field(name string) (string, bool) {
	switch name {
	case "pais":
		return o.Pais, true
	case "cliente_id":
		return o.ClienteID, true
	case "pedido_id":
		return o.PedidoID, true
	}
	return "", false
}

// Invalid is why a message is not a valid order, starting with the field at fault.
type Invalid struct{ Msg string }

func (e *Invalid) Error() string { return "invalid: " + e.Msg }

// Reason is the pedidos_descartados.reason value.
func (e *Invalid) Reason() string { return e.Error() }

func invalid(format string, a ...any) error { return &Invalid{Msg: fmt.Sprintf(format, a...)} }

// IsCountry reports whether a code is an assigned ISO 3166-1 alpha-2 code;
// callers pass the data contracts' list, so both paths agree.
type IsCountry func(code string) bool

// Bounds on the identifiers that become document IDs downstream, SKUs
// included (at most 1,500 bytes once escaped, which can triple non-ASCII
// text): an order beyond them is invalid rather than an error that Pub/Sub
// would redeliver forever.
const (
	MaxPedidoIDBytes  = 256
	MaxClienteIDBytes = 256
	MaxSKUBytes       = 256
)

// Event times outside [MinEventTime, MaxEventTime) are invalid: windows,
// expiries and TTLs near the ends of RFC 3339's years 0-9999 would leave the
// range of JSON, Firestore and BigQuery times, and fail forever.
var (
	MinEventTime = time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC)
	MaxEventTime = time.Date(9000, 1, 1, 0, 0, 0, 0, time.UTC)
)

// DefaultMaxClockSkew is how far ahead of processing time an event time may
// be (MAX_CLOCK_SKEW): an order dated years ahead would open a window that
// stays open until then.
const DefaultMaxClockSkew = 24 * time.Hour

// Rules are what makes a message a valid order besides its shape.
type Rules struct {
	IsCountry IsCountry // nil: any two-letter code
	// An event time more than MaxClockSkew after Now is invalid. A zero Now
	// or MaxClockSkew skips the check (a replay has no meaningful now).
	Now          time.Time
	MaxClockSkew time.Duration
}

// Parse is Rules{IsCountry: isCountry}.Parse: no clock-skew check.
func Parse(data []byte, attrs map[string]string, isCountry IsCountry) (Order, error) {
	return Rules{IsCountry: isCountry}.Parse(data, attrs)
}

// Parse validates one message body and its attributes. Every problem is an
// *Invalid: a message is either a valid order or invalid, never an error to
// retry.
func (r Rules) Parse(data []byte, attrs map[string]string) (Order, error) {
	raw, ok := attrs[EventTimeAttribute]
	if !ok || strings.TrimSpace(raw) == "" {
		return Order{}, invalid("missing attribute %s", EventTimeAttribute)
	}
	t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(raw))
	if err != nil {
		return Order{}, invalid("%s %q is not RFC 3339", EventTimeAttribute, raw)
	}
	if t.Before(MinEventTime) || !t.Before(MaxEventTime) {
		return Order{}, invalid("%s %s is outside the years %d to %d",
			EventTimeAttribute, t.UTC().Format(time.RFC3339Nano), MinEventTime.Year(), MaxEventTime.Year()-1)
	}
	if !r.Now.IsZero() && r.MaxClockSkew > 0 && t.Sub(r.Now) > r.MaxClockSkew {
		return Order{}, invalid("%s %s is more than %s ahead of processing time %s",
			EventTimeAttribute, t.UTC().Format(time.RFC3339Nano), r.MaxClockSkew, r.Now.UTC().Format(time.RFC3339Nano))
	}
	sh, err := scan(data)
	if err != nil {
		return Order{}, invalid("%s", err)
	}
	if sh.longest > MaxLineas {
		return Order{}, invalid("%q has more than %d elements; an order has at most %d lines", clipBytes(sh.longestKey, 64), MaxLineas, MaxLineas)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var o Order
	if err := dec.Decode(&o); err != nil {
		if field, ok := culprit(data, err); ok {
			return Order{}, invalid("%s", field)
		}
		return Order{}, invalid("body is not an order: %s", jsonProblem(err))
	}
	if dec.More() {
		return Order{}, invalid("body has data after the order object")
	}
	o.EventTime = t.UTC()
	o.PedidoID = strings.TrimSpace(o.PedidoID)
	o.Pais = strings.ToUpper(strings.TrimSpace(o.Pais))
	switch {
	case o.PedidoID == "":
		return Order{}, invalid("missing pedido_id")
	case len(o.PedidoID) > MaxPedidoIDBytes:
		return Order{}, invalid("pedido_id longer than %d bytes", MaxPedidoIDBytes)
	case len(o.ClienteID) > MaxClienteIDBytes:
		return Order{}, invalid("cliente_id longer than %d bytes", MaxClienteIDBytes)
	case o.ImporteTotal.Sign() < 0:
		return Order{}, invalid("importe_total %s is negative", o.ImporteTotal)
	case r.IsCountry != nil && !r.IsCountry(o.Pais):
		return Order{}, invalid("pais %q is not an ISO 3166-1 alpha-2 code", o.Pais)
	case r.IsCountry == nil && len(o.Pais) != 2:
		return Order{}, invalid("pais %q is not a two-letter code", o.Pais)
	}
	for i, l := range o.Lineas {
		if l.Cantidad <= 0 {
			return Order{}, invalid("lineas[%d].cantidad %d must be > 0", i, l.Cantidad)
		}
		if len(l.SKU) > MaxSKUBytes {
			return Order{}, invalid("lineas[%d].sku longer than %d bytes", i, MaxSKUBytes)
		}
		if l.PrecioUnitario.Sign() < 0 {
			return Order{}, invalid("lineas[%d].precio_unitario %s is negative", i, l.PrecioUnitario)
		}
	}
	return o, nil
}

func jsonProblem(err error) string {
	msg := err.Error()
	if errors.Is(err, numeric.ErrSyntax) || errors.Is(err, numeric.ErrPrecision) || errors.Is(err, numeric.ErrOverflow) {
		return "amount " + msg
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return fmt.Sprintf("%s is a JSON %s, where %s belongs", te.Field, te.Value, kindOf(te.Type))
	}
	return strings.TrimPrefix(msg, "json: ")
}

// kindOf names what a Go type decodes from, in JSON's words.
func kindOf(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.String:
		return "a string"
	case reflect.Int, reflect.Int64, reflect.Int32:
		return "a whole number"
	}
	return "another kind of value"
}

// culprit names the field a failed decode stopped at, and its value
// (`lineas[0].cantidad "x" is not a whole number`), which encoding/json's
// errors lack, by reading the invalid body once more; ok is false when the
// field cannot be found.
func culprit(data []byte, err error) (string, bool) {
	var body map[string]json.RawMessage
	if json.Unmarshal(data, &body) != nil {
		return "", false
	}
	var lines []map[string]json.RawMessage
	if raw, ok := body["lineas"]; ok && json.Unmarshal(raw, &lines) != nil {
		lines = nil
	}
	// In decoding order: the first that fails is where the decoder stopped.
	type field struct {
		name string
		raw  json.RawMessage
	}
	var fields []field
	for _, k := range []string{"pedido_id", "cliente_id", "pais", "importe_total"} {
		if raw, ok := body[k]; ok {
			fields = append(fields, field{k, raw})
		}
	}
	for i, l := range lines {
		for _, k := range []string{"sku", "cantidad", "precio_unitario"} {
			if raw, ok := l[k]; ok {
				fields = append(fields, field{fmt.Sprintf("lineas[%d].%s", i, k), raw})
			}
		}
	}
	var te *json.UnmarshalTypeError
	isType := errors.As(err, &te)
	isAmount := errors.Is(err, numeric.ErrSyntax) || errors.Is(err, numeric.ErrPrecision) || errors.Is(err, numeric.ErrOverflow)
	for _, f := range fields {
		leaf := f.name[strings.LastIndexByte(f.name, '.')+1:]
		switch {
		case isAmount && (leaf == "importe_total" || leaf == "precio_unitario"):
			var d numeric.Dec
			if derr := d.UnmarshalJSON(f.raw); derr != nil {
				return f.name + " " + derr.Error(), true
			}
		case isType && te.Field != "" && strings.HasSuffix(te.Field, leaf) && leaf != "importe_total" && leaf != "precio_unitario":
			if leaf == "cantidad" {
				var n int64
				if json.Unmarshal(f.raw, &n) != nil {
					return fmt.Sprintf("%s %s is not a whole number", f.name, clipBytes(f.raw, 64)), true
				}
				continue
			}
			var s string
			if json.Unmarshal(f.raw, &s) != nil {
				return fmt.Sprintf("%s %s is not a string", f.name, clipBytes(f.raw, 64)), true
			}
		}
	}
	return "", false
}
