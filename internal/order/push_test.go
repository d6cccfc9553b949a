package order

import (
	"encoding/base64"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestDecodePush(t *testing.T) {
	data := base64.StdEncoding.EncodeToString([]byte(`{"pedido_id":"P-1"}`))
	wrapped := `{"message":{"data":"` + data + `","attributes":{"momento_evento":"2026-03-14T18:42:00+01:00"},"messageId":"m-1","publishTime":"2026-03-14T17:51:00Z"},"subscription":"projects/p/subscriptions/s","deliveryAttempt":3}`
	eventarc := `{"message":{"data":"` + data + `","attributes":{"momento_evento":"2026-03-14T18:42:00+01:00"},"message_id":"m-2","publishTime":"2026-03-14T17:51:00Z"},"subscription":"projects/p/subscriptions/s"}`
	msg := func(id, id2 string) Message {
		return Message{Data: []byte(`{"pedido_id":"P-1"}`), Attributes: map[string]string{"momento_evento": "2026-03-14T18:42:00+01:00"},
			MessageID: id, MessageID2: id2, PublishTime: time.Date(2026, 3, 14, 17, 51, 0, 0, time.UTC)}
	}
	ce := http.Header{"Ce-Id": {"m-2"}, "Ce-Type": {MessagePublishedType}, "Ce-Specversion": {"1.0"}, "Content-Type": {"application/json"}}
	json := http.Header{"Content-Type": {"application/json"}}
	tests := []struct {
		name    string
		header  http.Header
		body    string
		want    Delivery
		wantErr string // a substring of the error; "" for none
	}{
		{name: "wrapped push keeps deliveryAttempt and subscription", header: json, body: wrapped,
			want: Delivery{Message: msg("m-1", ""), Subscription: "projects/p/subscriptions/s", DeliveryAttempt: 3, Format: "push"}},
		{name: "eventarc binary CloudEvent", header: ce, body: eventarc,
			want: Delivery{Message: msg("", "m-2"), Subscription: "projects/p/subscriptions/s", Format: "cloudevent"}},
		{name: "other CloudEvent type", header: http.Header{"Ce-Id": {"x"}, "Ce-Type": {"google.cloud.storage.object.v1.finalized"}},
			body: eventarc, wantErr: "CloudEvent type"},
		{name: "plain order without envelope", header: http.Header{}, body: `{"pedido_id":"P-1"}`, wantErr: "without message.messageId"},
		{name: "garbage", header: http.Header{}, body: `not json`, wantErr: "not a push body"},
		{name: "bad base64", header: http.Header{}, body: `{"message":{"data":"%%%","messageId":"m"}}`, wantErr: "not a push body"},
		// The envelope's strings (message ID, attributes) are held to Parse's
		// rule on text decoding would change, so two forged message IDs
		// cannot collide either.
		{name: "message ID with a lone surrogate", header: json, body: `{"message":{"data":"` + data + `","messageId":"m-\udbff"}}`,
			wantErr: `invalid_utf8: push body: "message": unpaired surrogate escape \udbff at byte 65`},
		{name: "attribute with a raw 0xff", header: json,
			body:    `{"message":{"data":"` + data + `","attributes":{"momento_evento":"2026-03-14T18:42:00Z","x":"` + "\xff" + `"},"messageId":"m-1"}}`,
			wantErr: `invalid_utf8: push body: "message": byte 109 (0xff) is not UTF-8`},
		{name: "message ID with an escaped ñ", header: json, body: `{"message":{"data":"` + data + `","messageId":"m-\u00f1"}}`,
			want: Delivery{Message: Message{Data: []byte(`{"pedido_id":"P-1"}`), MessageID: "m-ñ"}, Format: "push"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecodePush(tt.header, []byte(tt.body))
			if tt.wantErr != "" || err != nil {
				if tt.wantErr == "" || err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("DecodePush error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("delivery (-want +got):\n%s", diff)
			}
			if got.Message.ID() == "" {
				t.Error("message ID is empty")
			}
		})
	}
}
