package render

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strings"
	"time"
	"unicode"

	"github.com/alpinashop/alpipe/internal/numeric"
)

// JSON writes v as the one JSON style of every --format json: one indented
// document; keys in snake_case and in declaration order; times in RFC 3339
// (UTC); durations as seconds under a key ending _seconds; NUMERIC an exact
// decimal string with its scale ("179.80"). A core type without json tags
// cannot leak Go names or nanoseconds through it.
func JSON(w io.Writer, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(styled(reflect.ValueOf(v))); err != nil {
		return err
	}
	_, err := w.Write(buf.Bytes())
	return err
}

type object []member

type member struct {
	key   string
	value any
}

func (o object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(m.key)
		b.Write(k)
		b.WriteByte(':')
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(m.value); err != nil {
			return nil, err
		}
		b.Truncate(b.Len() - 1) // Encode's newline
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

var (
	timeType     = reflect.TypeOf(time.Time{})
	durationType = reflect.TypeOf(time.Duration(0))
	decType      = reflect.TypeOf(numeric.Dec{})
	rawType      = reflect.TypeOf(json.RawMessage(nil))
	objectType   = reflect.TypeOf(object(nil))
)

func styled(v reflect.Value) any {
	if !v.IsValid() {
		return nil
	}
	switch v.Type() {
	case timeType:
		t := v.Interface().(time.Time)
		if t.IsZero() {
			return nil
		}
		return t.UTC().Format(time.RFC3339Nano)
	case durationType:
		return v.Interface().(time.Duration).Seconds()
	case decType:
		return Money(v.Interface().(numeric.Dec))
	case rawType, objectType:
		return v.Interface()
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return nil
		}
		return styled(v.Elem())
	case reflect.Struct:
		o := object{}
		addFields(&o, v)
		return o
	case reflect.Map:
		if v.IsNil() {
			return map[string]any{}
		}
		m := make(map[string]any, v.Len())
		for it := v.MapRange(); it.Next(); {
			m[fmt.Sprint(it.Key().Interface())] = styled(it.Value())
		}
		return m
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.Uint8 {
			return string(v.Bytes())
		}
		out := make([]any, v.Len())
		for i := range out {
			out[i] = styled(v.Index(i))
		}
		return out
	}
	return v.Interface()
}

func addFields(o *object, v reflect.Value) {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		fv := v.Field(i)
		if f.Anonymous && name == "" && fv.Kind() == reflect.Struct {
			addFields(o, fv)
			continue
		}
		if (strings.Contains(opts, "omitempty") || strings.Contains(opts, "omitzero")) && fv.IsZero() {
			continue
		}
		name = cmp.Or(name, snake(f.Name))
		if f.Type == durationType && !strings.HasSuffix(name, "_seconds") {
			name += "_seconds"
		}
		*o = append(*o, member{name, styled(fv)})
	}
}

// snake turns a Go field name into snake_case: PedidoID -> pedido_id,
// WatermarkBefore -> watermark_before, CRC32C -> crc32c.
func snake(s string) string {
	r := []rune(s)
	var b strings.Builder
	for i, c := range r {
		if i > 0 && unicode.IsUpper(c) {
			prev := r[i-1]
			nextLower := i+1 < len(r) && unicode.IsLower(r[i+1])
			if unicode.IsLower(prev) || (unicode.IsUpper(prev) || unicode.IsDigit(prev)) && nextLower {
				b.WriteByte('_')
			}
		}
		b.WriteRune(unicode.ToLower(c))
	}
	return b.String()
}
