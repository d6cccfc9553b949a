package order

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// MessagePublishedType is Eventarc's CloudEvent type for a Pub/Sub message.
const MessagePublishedType = "google.cloud.pubsub.topic.v1.messagePublished"

// Message is a Pub/Sub message as a push request carries it.
type Message struct {
	Data        []byte            `json:"data"` // base64 in JSON
	Attributes  map[string]string `json:"attributes"`
	MessageID   string            `json:"messageId"`
	MessageID2  string            `json:"message_id,omitempty"` // Eventarc sends both spellings
	PublishTime time.Time         `json:"publishTime"`
}

// ID returns the message ID, whichever spelling carried it.
func (m Message) ID() string { return cmp.Or(m.MessageID, m.MessageID2) }

// Delivery is one push request.
type Delivery struct {
	Message         Message `json:"message"`
	Subscription    string  `json:"subscription"`
	DeliveryAttempt int     `json:"deliveryAttempt,omitempty"` // 0 when dead lettering is off
	// Format is "push" for Pub/Sub's wrapped push body, "cloudevent" for an
	// Eventarc binary-mode CloudEvent.
	Format string `json:"-"`
}

// DecodePush reads a push request body: Pub/Sub's wrapped push, or
// Eventarc's binary CloudEvent (metadata in ce-* headers). An error means
// the body is not a push request, or holds text decoding would change (two
// message IDs could decode alike); the caller dead-letters it, never retries.
func DecodePush(h http.Header, body []byte) (Delivery, error) {
	var d Delivery
	d.Format = "push"
	if h.Get("Ce-Id") != "" {
		d.Format = "cloudevent"
		if typ := h.Get("Ce-Type"); typ != MessagePublishedType {
			return d, fmt.Errorf("CloudEvent type %q, want %s", typ, MessagePublishedType)
		}
	}
	if ct := h.Get("Content-Type"); ct != "" && !strings.HasPrefix(ct, "application/json") {
		return d, fmt.Errorf("content type %q, want application/json", ct)
	}
	if _, err := scan(body); err != nil {
		var te *textError
		if errors.As(err, &te) {
			te.in = "push body"
		}
		return d, err
	}
	if err := json.Unmarshal(body, &d); err != nil {
		return d, fmt.Errorf("not a push body: %w", err)
	}
	if d.Message.ID() == "" && d.Format == "cloudevent" {
		d.Message.MessageID = h.Get("Ce-Id") // Eventarc uses the message ID as the event ID
	}
	if d.Message.ID() == "" {
		return d, fmt.Errorf("push body without message.messageId")
	}
	return d, nil
}
