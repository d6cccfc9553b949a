package stack

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// HumanLog turns the processes' prefixed output ("service | line") into
// text for a person watching scripts/stack.sh up: blank lines are dropped
// and each Cloud Logging JSON line becomes "service | message key=value",
// without its time (the real clock's, which the stack's story clock is
// not) and without empty values.
func HumanLog(w io.Writer) io.Writer {
	return &lineWriter{w: w, line: func(l []byte) []byte {
		if h, ok := humanLine(string(bytes.TrimSuffix(l, []byte("\n")))); ok {
			return []byte(h + "\n")
		}
		return nil
	}}
}

// lineWriter writes to w what line makes of each whole line (with its
// newline) written to it.
type lineWriter struct {
	mu   sync.Mutex
	w    io.Writer
	line func([]byte) []byte
	rest []byte
}

func (lw *lineWriter) Write(b []byte) (int, error) {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	lw.rest = append(lw.rest, b...)
	for {
		i := bytes.IndexByte(lw.rest, '\n')
		if i < 0 {
			return len(b), nil
		}
		out := lw.line(lw.rest[:i+1])
		lw.rest = lw.rest[i+1:]
		if len(out) == 0 {
			continue
		}
		if _, err := lw.w.Write(out); err != nil {
			return len(b), err
		}
	}
}

// humanLine renders one prefixed line, or reports false for a line with
// nothing after its prefix.
func humanLine(line string) (string, bool) {
	svc, text, found := strings.Cut(line, " | ")
	if !found {
		svc, text = "", line
	}
	text = strings.TrimSpace(text)
	if text == "" {
		return "", false
	}
	if h, ok := humanJSON([]byte(text), "time"); ok {
		text = h
	}
	if svc == "" {
		return text, true
	}
	return svc + " | " + text, true
}

// humanJSON renders a JSON object as "message key=value ..." in the
// object's own order, nested objects as dotted keys. It leaves out the
// skipped keys, nulls, empty strings, lists and objects, shows zero times
// (Go's 0001-01-01T00:00:00Z: a watermark before the first order) as
// "none", a severity other than INFO first, and reports false when b is
// not a JSON object.
func humanJSON(b []byte, skip ...string) (string, bool) {
	var pairs [][2]string
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := flatten(dec, "", &pairs); err != nil || dec.More() {
		return "", false
	}
	var head, rest []string
	for _, p := range pairs {
		k, v := p[0], p[1]
		switch {
		case slices.Contains(skip, k):
		case k == "severity":
			if v != "INFO" {
				head = append([]string{v}, head...)
			}
		case k == "message" || k == "msg":
			head = append(head, v)
		default:
			if strings.ContainsAny(v, " \t\"=") {
				v = fmt.Sprintf("%q", v)
			}
			rest = append(rest, k+"="+v)
		}
	}
	return strings.Join(append(head, rest...), " "), true
}

// flatten reads one JSON object from dec into key/value pairs.
func flatten(dec *json.Decoder, prefix string, pairs *[][2]string) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return fmt.Errorf("not an object")
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		key := prefix + tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return err
		}
		raw = bytes.TrimSpace(raw)
		switch {
		case len(raw) == 0 || string(raw) == "null" || string(raw) == `""` || string(raw) == "{}" || string(raw) == "[]":
		case raw[0] == '{':
			sub := json.NewDecoder(bytes.NewReader(raw))
			sub.UseNumber()
			if err := flatten(sub, key+".", pairs); err != nil {
				return err
			}
		case raw[0] == '"':
			var s string
			if err := json.Unmarshal(raw, &s); err != nil {
				return err
			}
			if zeroTime(s) {
				s = "none"
			}
			*pairs = append(*pairs, [2]string{key, s})
		case raw[0] == '[' && bytes.HasPrefix(bytes.TrimSpace(raw[1:]), []byte("{")):
			// A list of objects (a tick's panes) is told by its length:
			// the process's own log line says what they were.
			var items []json.RawMessage
			if err := json.Unmarshal(raw, &items); err != nil {
				return err
			}
			*pairs = append(*pairs, [2]string{key, fmt.Sprint(len(items))})
		case raw[0] == '[':
			var items []json.RawMessage
			if err := json.Unmarshal(raw, &items); err != nil {
				return err
			}
			vals := make([]string, 0, len(items))
			for _, it := range items {
				var s string
				if json.Unmarshal(it, &s) != nil {
					s = string(it)
				}
				vals = append(vals, s)
			}
			*pairs = append(*pairs, [2]string{key, strings.Join(vals, ",")})
		default:
			// Numbers and booleans keep their JSON text (exact).
			var c bytes.Buffer
			if err := json.Compact(&c, raw); err != nil {
				return err
			}
			*pairs = append(*pairs, [2]string{key, c.String()})
		}
	}
	_, err = dec.Token() // the closing brace
	return err
}

func zeroTime(s string) bool {
	t, err := time.Parse(time.RFC3339Nano, s)
	return err == nil && t.IsZero()
}

// callLine is one scheduler call for a person: the schedule time on the
// stack's clock, the job, the answer's status and what it said.
func callLine(c Call, err error) string {
	var b strings.Builder
	fmt.Fprintf(&b, "scheduler %s %s: ", c.At.UTC().Format("2006-01-02 15:04"), c.Job)
	switch {
	case c.Status == 0 && err != nil:
		fmt.Fprintf(&b, "not answered: %v", err)
		return b.String()
	default:
		fmt.Fprintf(&b, "HTTP %d %s", c.Status, http.StatusText(c.Status))
	}
	body := bytes.TrimSpace(c.Body)
	if len(body) == 0 {
		return b.String()
	}
	sep := ": "
	text := strings.Join(strings.Fields(string(body)), " ")
	if h, ok := humanJSON(body); ok {
		sep, text = ", ", h
	}
	const max = 300
	if len(text) > max {
		text = text[:max] + "..."
	}
	if text != "" {
		b.WriteString(sep + text)
	}
	return b.String()
}

// bucketsText lists Terraform's buckets as "key name" pairs, sorted by key.
func bucketsText(buckets map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(buckets)) {
		parts = append(parts, fmt.Sprintf("%s: %s", k, buckets[k]))
	}
	return strings.Join(parts, ", ")
}

// cronText says in words when a schedule of the kind cronMinutes accepts
// fires.
func cronText(spec string) string {
	f := strings.Fields(spec)
	if len(f) != 5 {
		return "schedule " + spec
	}
	switch m := f[0]; {
	case m == "*" || m == "*/1":
		return "every minute"
	case strings.HasPrefix(m, "*/"):
		return "every " + m[2:] + " minutes"
	case !strings.Contains(m, ","):
		return "at minute " + m + " of every hour"
	default:
		return "at minutes " + m + " of every hour"
	}
}
