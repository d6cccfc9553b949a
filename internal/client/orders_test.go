package client

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestReadStepsInput: a byte order mark (Windows editors write one) is not
// part of the first order, and a line that is not JSON is named by its
// number and its start. Before, a BOM gave "invalid character 'ï' looking
// for beginning of value".
func TestReadStepsInput(t *testing.T) {
	tests := []struct {
		name, in string
		want     string // the one order read, or the error
	}{
		{name: "BOM", in: "\ufeff" + `{"momento_evento":"2026-03-14T17:00:00Z","pedido_id":"P-1"}` + "\n", want: `{"pedido_id":"P-1"}`},
		{name: "CSV", in: "\ufeffpedido_id,linea,fecha,sku,cantidad,precio_unitario,importe,cliente_id,pais\n",
			want: `line 1 "pedido_id,linea,fecha,sku,cantidad,preci…" is not a JSON object: invalid character 'p' looking for beginning of value`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			steps, err := ReadSteps(strings.NewReader(tt.in))
			var got []string
			for _, s := range steps {
				got = append(got, string(s.Order))
			}
			if err != nil {
				got = []string{err.Error()}
			}
			if diff := cmp.Diff([]string{tt.want}, got); diff != "" {
				t.Errorf("orders or error (-want +got):\n%s", diff)
			}
		})
	}
}

// TestReplayErrors pins Replay's sentences: a refusal is the status and the
// server's words (up to 16 KB), and a server that dies mid-replay, after
// the command's Ping succeeded, "stopped answering" rather than being asked
// whether `alpipe serve` is running at all.
func TestReplayErrors(t *testing.T) {
	long := strings.Repeat("x", 20<<10)
	refuse := func(msg string) http.HandlerFunc {
		return func(w http.ResponseWriter, _ *http.Request) { http.Error(w, msg, http.StatusConflict) }
	}
	tests := []struct {
		name    string
		handler http.HandlerFunc
		want    string
		prefix  bool // want is only the error's start
	}{
		{name: "refused", handler: refuse("windows already have live panes"),
			want: "replay: HTTP 409: windows already have live panes"},
		{name: "refusal clipped at 16 KB", handler: refuse(long), want: "replay: HTTP 409: " + long[:16<<10]},
		{name: "server dies mid-replay", want: "replay: the server stopped answering: ", prefix: true,
			handler: func(w http.ResponseWriter, _ *http.Request) {
				conn, _, err := http.NewResponseController(w).Hijack()
				if err == nil {
					conn.Close()
				}
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ts := httptest.NewServer(tc.handler)
			t.Cleanup(ts.Close)
			_, err := Server{URL: ts.URL}.Replay(context.Background(), url.Values{}, strings.NewReader("{}\n"))
			got := ""
			if err != nil {
				got = err.Error()
			}
			if tc.prefix && strings.HasPrefix(got, tc.want) {
				got = tc.want // the rest is Go's words for the lost connection
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Replay error (-want +got):\n%s", diff)
			}
		})
	}
}

// TestErrorsNameThePathSent: behind a --server with a path (a proxy's
// prefix) an error names the path the request went to, and a redirect does
// not replace it with the path it was sent on to.
func TestErrorsNameThePathSent(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/elsewhere" {
			http.Redirect(w, r, "/elsewhere", http.StatusFound)
			return
		}
		http.Error(w, "no such route", http.StatusNotFound)
	}))
	t.Cleanup(ts.Close)
	_, err := Server{URL: ts.URL + "/alpipe"}.Ledger(context.Background())
	want := "GET /alpipe/_local/ledger: HTTP 404: no such route"
	if err == nil || err.Error() != want {
		t.Errorf("Ledger error = %v, want %q", err, want)
	}
}
