package order

import (
	"encoding/base64"
	"net/http"
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
	tests := []struct {
		name    string
		header  http.Header
		body    string
		want    Delivery
		wantErr bool
	}{
		{name: "wrapped push keeps deliveryAttempt and subscription", header: http.Header{"Content-Type": {"application/json"}}, body: wrapped,
			want: Delivery{Message: msg("m-1", ""), Subscription: "projects/p/subscriptions/s", DeliveryAttempt: 3, Format: "push"}},
		{name: "eventarc binary CloudEvent", header: ce, body: eventarc,
			want: Delivery{Message: msg("", "m-2"), Subscription: "projects/p/subscriptions/s", Format: "cloudevent"}},
		{name: "other CloudEvent type", header: http.Header{"Ce-Id": {"x"}, "Ce-Type": {"google.cloud.storage.object.v1.finalized"}}, body: eventarc, wantErr: true},
		{name: "plain order without envelope", header: http.Header{}, body: `{"pedido_id":"P-1"}`, wantErr: true},
		{name: "garbage", header: http.Header{}, body: `not json`, wantErr: true},
		{name: "bad base64", header: http.Header{}, body: `{"message":{"data":"%%%","messageId":"m"}}`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecodePush(tt.header, []byte(tt.body))
			if (err != nil) != tt.wantErr {
				t.Fatalf("DecodePush error = %v, wantErr %v", err, tt.wantErr)
			}
			if tt.wantErr {
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
