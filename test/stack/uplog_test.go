package stack

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// HumanLog turns the processes' prefixed output ("service | line") into
// text for a person watching scripts/stack.sh up: blank lines are dropped
// and each JSON log line becomes "service | message key=value", without its
// time (the real clock's, not the story's) and without empty values.
func HumanLog(w io.Writer) io.Writer {
	return &lineWriter{w: w, line: func(l []byte) []byte {
		if h, ok := humanLine(string(bytes.TrimSuffix(l, []byte("\n")))); ok {
			return []byte(h + "\n")
		}
		return nil
	}}
}

// humanLine reports false for a line with nothing after its prefix.
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
// object's own order, nested objects as dotted keys, without the skipped
// keys and empty values, a zero time (a watermark before the first order)
// as "none", a severity other than INFO first; false when b is no object.
func humanJSON(b []byte, skip ...string) (string, bool) {
	var pairs [][2]string
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return "", false
	}
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

// flatten reads the rest of a JSON object, its '{' read, from dec into
// key/value pairs.
func flatten(dec *json.Decoder, prefix string, pairs *[][2]string) error {
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return err
		}
		key := prefix + k.(string)
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		var v string
		switch tok := tok.(type) {
		case json.Delim: // an object or a list
			if tok == '{' {
				if err := flatten(dec, key+".", pairs); err != nil {
					return err
				}
				continue
			}
			var vals []string
			objects := false
			for dec.More() {
				var it json.RawMessage
				if err := dec.Decode(&it); err != nil {
					return err
				}
				var s string
				if json.Unmarshal(it, &s) != nil {
					s = string(it)
				}
				vals = append(vals, s)
				objects = objects || it[0] == '{'
			}
			if _, err := dec.Token(); err != nil { // the closing bracket
				return err
			}
			v = strings.Join(vals, ",")
			if objects { // a list of objects (a tick's panes) is told by its length
				v = fmt.Sprint(len(vals))
			}
		case string:
			if v = tok; zeroTime(v) {
				v = "none"
			}
		case nil:
		default: // numbers and booleans keep their JSON text (exact)
			v = fmt.Sprint(tok)
		}
		if v != "" {
			*pairs = append(*pairs, [2]string{key, v})
		}
	}
	_, err := dec.Token() // the closing brace
	return err
}

func zeroTime(s string) bool {
	t, err := time.Parse(time.RFC3339Nano, s)
	return err == nil && t.IsZero()
}

// callLine is one scheduler call for a person: the schedule time on the
// stack's clock, the job, the answer's status and what it said.
func callLine(c Call, err error) string {
	head := fmt.Sprintf("scheduler %s %s: ", c.At.UTC().Format("2006-01-02 15:04"), c.Job)
	if c.Status == 0 && err != nil {
		return head + "not answered: " + err.Error()
	}
	head += fmt.Sprintf("HTTP %d %s", c.Status, http.StatusText(c.Status))
	body := bytes.TrimSpace(c.Body)
	sep, text := ": ", strings.Join(strings.Fields(string(body)), " ")
	if h, ok := humanJSON(body); ok {
		sep, text = ", ", h
	}
	if len(text) > 300 {
		text = text[:300] + "..."
	}
	if text == "" {
		return head
	}
	return head + sep + text
}

// bucketsText lists Terraform's buckets as "key name" pairs, sorted by key.
func bucketsText(buckets map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(buckets)) {
		parts = append(parts, fmt.Sprintf("%s: %s", k, buckets[k]))
	}
	return strings.Join(parts, ", ")
}

// cronText says in words when a schedule cronMinutes accepts fires.
func cronText(spec string) string {
	switch m, _, _ := strings.Cut(spec, " "); m {
	case "*", "*/1":
		return "every minute"
	default:
		return "every " + strings.TrimPrefix(m, "*/") + " minutes"
	}
}

// TestUpText checks what scripts/stack.sh up prints: the processes' log
// lines (HumanLog's, also split across writes), the scheduler's calls, the
// banner's words for buckets and schedules, and the up clock's start.
func TestUpText(t *testing.T) {
	at := time.Date(2026, 3, 14, 20, 31, 0, 0, time.UTC)
	checkTexts(t, []textCase{
		{name: "blank after the prefix is dropped", got: kept(humanLine("alpipe-orders | ")), want: "(dropped)"},
		{name: "whitespace after the prefix is dropped", got: kept(humanLine("alpipe-orders |    \t")), want: "(dropped)"},
		{name: "plain text stays", got: kept(humanLine("alpipe-orders | listening on :8080")), want: "alpipe-orders | listening on :8080"},
		{
			name: "JSON log: message first, time left out, zero times none",
			got: kept(humanLine(`alpipe-orders | {"time":"2026-12-01T20:21:00Z",` +
				`"severity":"INFO","message":"tick","watermark_before":"0001-01-01T00:00:00Z",` +
				`"watermark":"2026-03-14T18:00:00Z","panes":2}`)),
			want: "alpipe-orders | tick watermark_before=none watermark=2026-03-14T18:00:00Z panes=2",
		},
		{
			name: "severity other than INFO leads; nested objects are dotted; numbers keep their text",
			got: kept(humanLine(`alpipe-ingest | {"severity":"WARNING","message":"file rejected",` +
				`"file":{"name":"a b.csv","generation":17},"lag_seconds":9405.2,"reason":""}`)),
			want: `alpipe-ingest | WARNING file rejected file.name="a b.csv" file.generation=17 lag_seconds=9405.2`,
		},
		{
			name: "a list of objects is told by its length",
			got:  kept(humanLine(`svc | {"message":"tick","Panes":[{"a":1},{"a":2}],"keys":["ES","PT"]}`)), want: `svc | tick Panes=2 keys=ES,PT`,
		},
		{name: "null and empty values are left out", got: kept(humanLine(`svc | {"message":"m","a":null,"b":[],"c":{}}`)), want: "svc | m"},
		{name: "a line that only looks like JSON stays", got: kept(humanLine("svc | {not json")), want: "svc | {not json"},
		{
			name: "the writer joins lines split across writes and drops blank ones",
			got: humanLog("alpipe-orders | \nalpipe-orders | \n",
				"alpipe-orders | {\"message\":\"rea", "dy\"}\n", "alpipe-orders | \n"),
			want: "alpipe-orders | ready\n",
		},
		{
			name: "call: success with a JSON answer",
			got: callLine(Call{Job: "alpipe-orders-tick", At: at, Status: 200,
				Body: []byte(`{"aggregations":{"ventas":{"watermark_before":` +
					`"0001-01-01T00:00:00Z","watermark":"2026-03-14T18:00:00Z"}}}`)}, nil),
			want: "scheduler 2026-03-14 20:31 alpipe-orders-tick: HTTP 200 OK, " +
				"aggregations.ventas.watermark_before=none " +
				"aggregations.ventas.watermark=2026-03-14T18:00:00Z",
		},
		{
			name: "call: success without a body",
			got:  callLine(Call{Job: "alpipe-sweep", At: at, Status: 204}, nil), want: "scheduler 2026-03-14 20:31 alpipe-sweep: HTTP 204 No Content",
		},
		{
			name: "call: failure quotes the answer",
			got: callLine(Call{Job: "alpipe-sweep", At: at, Status: 500, Body: []byte("sweep: list\n  landing: boom\n")},
				errors.New("scheduler job alpipe-sweep: HTTP 500")),
			want: "scheduler 2026-03-14 20:31 alpipe-sweep: HTTP 500 Internal Server Error: sweep: list landing: boom",
		},
		{
			name: "call: no answer",
			got:  callLine(Call{Job: "alpipe-sweep", At: at}, errors.New("connection refused")),
			want: "scheduler 2026-03-14 20:31 alpipe-sweep: not answered: connection refused",
		},
		{name: "buckets sorted by key", got: bucketsText(map[string]string{"landing": "p-landing", "build": "p-build"}), want: "build: p-build, landing: p-landing"},
		{name: "every minute", got: cronText("* * * * *"), want: "every minute"},
		{name: "every 15 minutes", got: cronText("*/15 * * * *"), want: "every 15 minutes"},
		{name: "the story's end", got: storyEnd(storySteps(t)).Format(time.RFC3339), want: "2026-03-14T20:30:00Z"},
	})
}

// kept is humanLine's answer, "(dropped)" for a line it drops.
func kept(line string, ok bool) string {
	if !ok {
		return "(dropped)"
	}
	return line
}

// humanLog is what HumanLog writes of the chunks a process writes.
func humanLog(chunks ...string) string {
	var b strings.Builder
	w := HumanLog(&b)
	for _, c := range chunks {
		_, _ = w.Write([]byte(c)) // a strings.Builder takes every write
	}
	return b.String()
}
