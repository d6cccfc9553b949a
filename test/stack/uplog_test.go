package stack

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestHumanLine(t *testing.T) {
	tests := []struct {
		name   string
		line   string
		want   string
		wantOK bool
	}{
		{name: "blank after the prefix is dropped", line: "alpipe-orders | ", wantOK: false},
		{name: "whitespace after the prefix is dropped", line: "alpipe-orders |    \t", wantOK: false},
		{name: "plain text stays", line: "alpipe-orders | listening on :8080", want: "alpipe-orders | listening on :8080", wantOK: true},
		{
			name:   "JSON log: message first, time left out, zero times none",
			line:   `alpipe-orders | {"time":"2026-12-01T20:21:00Z","severity":"INFO","message":"tick","watermark_before":"0001-01-01T00:00:00Z","watermark":"2026-03-14T18:00:00Z","panes":2}`,
			want:   "alpipe-orders | tick watermark_before=none watermark=2026-03-14T18:00:00Z panes=2",
			wantOK: true,
		},
		{
			name:   "severity other than INFO leads; nested objects are dotted; numbers keep their text",
			line:   `alpipe-ingest | {"severity":"WARNING","message":"file rejected","file":{"name":"a b.csv","generation":17},"lag_seconds":9405.2,"reason":""}`,
			want:   `alpipe-ingest | WARNING file rejected file.name="a b.csv" file.generation=17 lag_seconds=9405.2`,
			wantOK: true,
		},
		{name: "a list of objects is told by its length", line: `svc | {"message":"tick","Panes":[{"a":1},{"a":2}],"keys":["ES","PT"]}`, want: `svc | tick Panes=2 keys=ES,PT`, wantOK: true},
		{name: "null and empty values are left out", line: `svc | {"message":"m","a":null,"b":[],"c":{}}`, want: "svc | m", wantOK: true},
		{name: "a line that only looks like JSON stays", line: "svc | {not json", want: "svc | {not json", wantOK: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := humanLine(tt.line)
			if ok != tt.wantOK {
				t.Fatalf("humanLine(%q) kept = %v, want %v (got %q)", tt.line, ok, tt.wantOK, got)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("humanLine(%q) (-want +got):\n%s", tt.line, diff)
			}
		})
	}
}

// TestHumanLogWriter checks the writer joins lines split across writes and
// drops the blank ones a process prints.
func TestHumanLogWriter(t *testing.T) {
	var b strings.Builder
	w := HumanLog(&b)
	for _, chunk := range []string{"alpipe-orders | \nalpipe-orders | \n", "alpipe-orders | {\"message\":\"rea", "dy\"}\n", "alpipe-orders | \n"} {
		if _, err := w.Write([]byte(chunk)); err != nil {
			t.Fatal(err)
		}
	}
	if diff := cmp.Diff("alpipe-orders | ready\n", b.String()); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
}

func TestCallLine(t *testing.T) {
	at := time.Date(2026, 3, 14, 20, 31, 0, 0, time.UTC)
	tests := []struct {
		name string
		call Call
		err  error
		want string
	}{
		{
			name: "success with a JSON answer",
			call: Call{Job: "alpipe-orders-tick", At: at, Status: 200, Body: []byte(`{"aggregations":{"ventas":{"watermark_before":"0001-01-01T00:00:00Z","watermark":"2026-03-14T18:00:00Z"}}}`)},
			want: "scheduler 2026-03-14 20:31 alpipe-orders-tick: HTTP 200 OK, aggregations.ventas.watermark_before=none aggregations.ventas.watermark=2026-03-14T18:00:00Z",
		},
		{
			name: "success without a body",
			call: Call{Job: "alpipe-sweep", At: at, Status: 204},
			want: "scheduler 2026-03-14 20:31 alpipe-sweep: HTTP 204 No Content",
		},
		{
			name: "failure quotes the answer",
			call: Call{Job: "alpipe-sweep", At: at, Status: 500, Body: []byte("sweep: list\n  landing: boom\n")},
			err:  errors.New("scheduler job alpipe-sweep: HTTP 500"),
			want: "scheduler 2026-03-14 20:31 alpipe-sweep: HTTP 500 Internal Server Error: sweep: list landing: boom",
		},
		{
			name: "no answer",
			call: Call{Job: "alpipe-sweep", At: at},
			err:  errors.New("connection refused"),
			want: "scheduler 2026-03-14 20:31 alpipe-sweep: not answered: connection refused",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := callLine(tt.call, tt.err)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("callLine (-want +got):\n%s", diff)
			}
			for _, raw := range []string{"<nil>", "map[", "0001-01-01"} {
				if strings.Contains(got, raw) {
					t.Errorf("callLine = %q, which shows a raw Go value %q", got, raw)
				}
			}
		})
	}
}

func TestBucketsAndSchedulesText(t *testing.T) {
	tests := []struct {
		name, got, want string
	}{
		{name: "buckets sorted by key", got: bucketsText(map[string]string{"landing": "p-landing", "build": "p-build"}), want: "build: p-build, landing: p-landing"},
		{name: "every minute", got: cronText("* * * * *"), want: "every minute"},
		{name: "every 15 minutes", got: cronText("*/15 * * * *"), want: "every 15 minutes"},
		{name: "one minute of the hour", got: cronText("5 * * * *"), want: "at minute 5 of every hour"},
		{name: "a list of minutes", got: cronText("0,30 * * * *"), want: "at minutes 0,30 of every hour"},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, tt.got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
}

// TestStoryEnd checks the up clock starts at the story's last step.
func TestStoryEnd(t *testing.T) {
	got := storyEnd(storySteps(t))
	want := time.Date(2026, 3, 14, 20, 30, 0, 0, time.UTC)
	if !got.Equal(want) {
		t.Errorf("storyEnd = %s, want %s", got, want)
	}
}
