package functions

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/stream"
)

// pushBody is a wrapped Pub/Sub push request carrying data.
func pushBody(t testing.TB, messageID string, data []byte) []byte {
	t.Helper()
	b, err := json.Marshal(map[string]any{
		"message": map[string]any{
			"data":        base64.StdEncoding.EncodeToString(data),
			"attributes":  map[string]string{"momento_evento": "2026-03-14T17:42:00Z"},
			"messageId":   messageID,
			"publishTime": "2026-03-14T17:51:00Z",
		},
		"subscription": "projects/p/subscriptions/s",
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// push posts one push body to h and decodes the result of a 200.
func push(t testing.TB, h http.Handler, body []byte) (int, stream.Result, string) {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	var res stream.Result
	if rec.Code == http.StatusOK {
		if err := json.Unmarshal(rec.Body.Bytes(), &res); err != nil {
			t.Fatalf("result %q: %v", rec.Body.String(), err)
		}
	}
	return rec.Code, res, strings.TrimSpace(rec.Body.String())
}

// TestAggregateOrdersCountsOrdersWhoseIDsDecodeAlike: pedido_ids that JSON
// decoding would turn into the same U+FFFD text are each dead-lettered with
// their reason, not answered duplicate and counted nowhere.
func TestAggregateOrdersCountsOrdersWhoseIDsDecodeAlike(t *testing.T) {
	now := time.Date(2026, 3, 14, 18, 0, 0, 0, time.UTC)
	_, p := testProcess(t, &now, nil, AggregateOrdersName)
	h := handler(t, p, AggregateOrdersName)
	type fate struct {
		Code      int
		Invalid   string
		Duplicate bool
		Fates     []stream.Fate
	}
	tests := []struct {
		name string
		id   string // the pedido_id as sent: JSON text, escapes and raw bytes alike
		pais string
		want fate
	}{
		{name: "A-\\ud800", id: `A-\ud800`, pais: "ES", want: fate{Code: 200, Invalid: `invalid: invalid_utf8: "pedido_id": unpaired surrogate escape \ud800 at byte 16`}},
		{name: "A-\\udbff", id: `A-\udbff`, pais: "FR", want: fate{Code: 200, Invalid: `invalid: invalid_utf8: "pedido_id": unpaired surrogate escape \udbff at byte 16`}},
		{name: "B-\\xff", id: "B-\xff", pais: "ES", want: fate{Code: 200, Invalid: `invalid: invalid_utf8: "pedido_id": byte 16 (0xff) is not UTF-8`}},
		{name: "B-\\xfe", id: "B-\xfe", pais: "FR", want: fate{Code: 200, Invalid: `invalid: invalid_utf8: "pedido_id": byte 16 (0xfe) is not UTF-8`}},
		{name: "A-\\ufffd still counts", id: `A-\ufffd`, pais: "ES", want: fate{Code: 200, Fates: []stream.Fate{stream.Accepted, stream.Accepted, stream.NoElements}}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := []byte(`{"pedido_id":"` + tt.id + `","pais":"` + tt.pais + `","importe_total":"10.00"}`)
			code, res, _ := push(t, h, pushBody(t, "m-"+string(rune('a'+i)), data))
			got := fate{Code: code, Invalid: res.Invalid, Duplicate: res.Duplicate}
			for _, o := range res.Aggregations {
				got.Fates = append(got.Fates, o.Fate)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("answer (-want +got):\n%s", diff)
			}
		})
	}
}
