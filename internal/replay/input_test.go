package replay

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseDates(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    string
		wantErr bool
	}{
		{name: "empty is every date", in: "", want: ""},
		{name: "one date", in: "2026-03-14", want: "2026-03-14..2026-03-14"},
		{name: "range", in: " 2026-02-27..2026-03-02 ", want: "2026-02-27..2026-03-02"},
		{name: "backwards", in: "2026-03-02..2026-02-27", wantErr: true},
		{name: "not a date", in: "14/03/2026", wantErr: true},
		{name: "open range", in: "2026-03-02..", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := ParseDates(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("ParseDates(%q) error = %v, want error %v", tt.in, err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, d.String()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	d, _ := ParseDates("2026-03-14..2026-03-15")
	for _, c := range []struct {
		t    string
		want bool
	}{
		{"2026-03-13T23:59:59.999Z", false}, {"2026-03-14T00:00:00Z", true},
		{"2026-03-16T00:30:00+01:00", true}, {"2026-03-16T00:00:00Z", false},
	} {
		if got := d.Contains(at(c.t)); got != c.want {
			t.Errorf("Contains(%s) = %v, want %v", c.t, got, c.want)
		}
	}
}

func TestJSONLReadsThePublishFormat(t *testing.T) {
	in := `{"momento_evento": "2026-03-14T18:42:00+01:00", "pedido": {"pedido_id": "P-1", "pais": "ES"}, "llegada": "2026-03-14T19:00:00Z", "nota": "story"}

{"tick": "2026-03-14T19:00:00Z"}
{"momento_evento": "2026-03-14T18:43:00Z", "pedido_id": "P-2", "pais": "FR"}
{"pedido_id": "P-3"}
`
	j := NewJSONL(strings.NewReader(in))
	var got []Message
	for {
		m, err := j.Next(context.Background())
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("Next: %v", err)
		}
		got = append(got, m)
	}
	want := []Message{
		{ID: "line 1", Data: []byte(`{"pedido_id": "P-1", "pais": "ES"}`), Attributes: map[string]string{"momento_evento": "2026-03-14T18:42:00+01:00"}},
		{ID: "line 4", Data: []byte(`{"pais":"FR","pedido_id":"P-2"}`), Attributes: map[string]string{"momento_evento": "2026-03-14T18:43:00Z"}},
		{ID: "line 5", Data: []byte(`{"pedido_id":"P-3"}`), Attributes: map[string]string{}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
}

func TestHandler(t *testing.T) {
	w := openWarehouse(t)
	h := NewHandler(w, options(t))
	post := func(t *testing.T, target, body string) *httptest.ResponseRecorder {
		t.Helper()
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, target, strings.NewReader(body))
		req.Header.Set("Content-Type", ContentType)
		h.ServeHTTP(rec, req)
		return rec
	}
	tests := []struct {
		name        string
		target      string
		body        string
		wantCode    int
		wantWritten int64
	}{
		{name: "orders JSONL", target: "/_local/replay?dates=2026-03-14..2026-03-15", body: history, wantCode: http.StatusOK, wantWritten: 4},
		{name: "lineas_pedido (empty)", target: "/_local/replay?source=lineas_pedido", wantCode: http.StatusOK},
		{name: "bad dates", target: "/_local/replay?dates=yesterday", wantCode: http.StatusBadRequest},
		{name: "bad source", target: "/_local/replay?source=bigtable", wantCode: http.StatusBadRequest},
		{name: "bad line", target: "/_local/replay", body: "[1, 2]\n", wantCode: http.StatusBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := post(t, tt.target, tt.body)
			if rec.Code != tt.wantCode {
				t.Fatalf("HTTP %d %s, want %d", rec.Code, rec.Body, tt.wantCode)
			}
			if rec.Code != http.StatusOK {
				return
			}
			var rep Report
			if err := json.Unmarshal(rec.Body.Bytes(), &rep); err != nil {
				t.Fatalf("decode report: %v", err)
			}
			if rep.Written != tt.wantWritten || !rep.Started.Equal(replayStart) {
				t.Errorf("report wrote %d panes, started %s; want %d, %s", rep.Written, rep.Started, tt.wantWritten, replayStart.Format(time.RFC3339))
			}
		})
	}
	t.Run("one replay at a time", func(t *testing.T) {
		h.busy.Lock()
		defer h.busy.Unlock()
		if rec := post(t, "/_local/replay", history); rec.Code != http.StatusConflict {
			t.Errorf("HTTP %d while another replay runs, want 409", rec.Code)
		}
	})
	t.Run("GET is refused", func(t *testing.T) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/_local/replay", nil))
		if rec.Code != http.StatusMethodNotAllowed {
			t.Errorf("HTTP %d, want 405", rec.Code)
		}
	})
}
