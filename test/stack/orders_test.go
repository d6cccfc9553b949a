package stack

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"cloud.google.com/go/pubsub/v2"
	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/test/tfconfig"
)

// stormOrder is one order of 89.90 made at 17:02 UTC (orderTime), in the
// ES window of 17:00-18:00.
const stormOrder = `{"pedido_id":"P-STORM","cliente_id":"C-1","pais":"ES","importe_total":"89.90","lineas":[{"sku":"MOCH-40L-AZ","cantidad":1,"precio_unitario":"89.90"}]}`

// TestDeadLetters: an invalid message is recorded in pedidos_descartados
// and acknowledged; a valid order that meets only 5xx (the service down)
// goes, after the subscription's max delivery attempts, to the dead-letter
// topic, where its pull subscription holds it.
func TestDeadLetters(t *testing.T) {
	t.Parallel()
	// Pub/Sub's minimum: the emulator redelivers on its own timing (about
	// 1 s, then 15-20 s, whatever the retry policy) and forwards to the
	// dead-letter topic some 30 s after the last attempt, so Terraform's
	// default of 10 attempts would take minutes.
	const maxAttempts = 5
	s := need(t, Options{Adjust: func(d *tfconfig.Deployment) {
		for i := range d.PushSubscriptions {
			d.PushSubscriptions[i].MaxDeliveryAttempts = maxAttempts
		}
	}})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	setClock(t, s, storyStart.Add(5*time.Minute))
	fe := s.Frontends["AggregateOrders"]
	invalid := publish(ctx, t, s, []byte(`{"pedido_id":"P-BAD","pais":"ES","importe_total":"mucho","lineas":[]}`), orderTime)
	acked(ctx, t, s, invalid)
	var reasons []string
	for _, row := range s.BigQuery.Rows("pedidos_descartados") {
		if row["message_id"] == invalid {
			reasons = append(reasons, fmt.Sprint(row["pedido_id"], ": ", row["reason"]))
		}
	}
	if len(reasons) != 1 {
		t.Errorf("pedidos_descartados rows of the invalid message: %v, want one", reasons)
	}

	// The service goes down: Cloud Run's front end answers 503.
	if err := s.Processes["AggregateOrders"].Stop(); err != nil {
		t.Fatal(err)
	}
	down := publish(ctx, t, s, []byte(stormOrder), orderTime)
	dlq, err := s.deadLetterSubscription()
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan *pubsub.Message, 1)
	rctx, rcancel := context.WithTimeout(ctx, 100*time.Second)
	defer rcancel()
	err = s.PubSub.Subscriber(dlq).Receive(rctx, func(_ context.Context, m *pubsub.Message) {
		m.Ack()
		if string(m.Data) == stormOrder {
			select {
			case got <- m:
			default:
			}
			rcancel()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	var m *pubsub.Message
	select {
	case m = <-got:
	default:
		t.Fatalf("message %s not on the dead-letter topic within 100 s", down)
	}
	if n := m.Attributes["CloudPubSubDeadLetterSourceDeliveryCount"]; n != fmt.Sprint(maxAttempts) {
		t.Errorf("dead-lettered after %s deliveries, want %d", n, maxAttempts)
	}
	var statuses []int
	var at []string
	for _, r := range fe.Requests() {
		if mid, _ := Pushed(r.Body); mid == down {
			statuses = append(statuses, r.Status)
			at = append(at, r.At.Format("15:04:05.000"))
		}
	}
	t.Logf("deliveries at %v, dead-lettered after %s", at, m.Attributes["CloudPubSubDeadLetterSourceDeliveryCount"])
	if len(statuses) != maxAttempts {
		t.Errorf("deliveries before dead-lettering: %v, want %d answered 503", statuses, maxAttempts)
	}
	for _, st := range statuses {
		if st != 503 {
			t.Errorf("a delivery got %d, want 503 (service down)", st)
		}
	}
}

// deadLetterSubscription is the pull subscription of the push
// subscription's dead-letter topic.
func (s *Stack) deadLetterSubscription() (string, error) {
	for _, p := range s.Deployment.PushSubscriptions {
		for _, q := range s.Deployment.PullSubscriptions {
			if p.DeadLetterTopic != "" && q.Topic == p.DeadLetterTopic {
				return s.SubscriptionName(q.Name), nil
			}
		}
	}
	return "", fmt.Errorf("no pull subscription on a dead-letter topic")
}

// TestPushSubscriptionAsConfigured: the emulator holds the push
// subscription as pubsub.tf declares it (ack deadline, retry policy,
// dead-letter policy, OIDC token), pushing to AggregateOrders' front end.
// What it then does not honour is listed in EmulatorGaps and logged here.
func TestPushSubscriptionAsConfigured(t *testing.T) {
	t.Parallel()
	s := need(t, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pushes := s.Deployment.PushSubscriptions
	if len(pushes) != 1 {
		t.Fatalf("%d push subscriptions in Terraform, want 1", len(pushes))
	}
	p := pushes[0]
	sub, err := s.PubSub.SubscriptionAdminClient.GetSubscription(ctx, &pubsubpb.GetSubscriptionRequest{Subscription: s.SubscriptionName(p.Name)})
	if err != nil {
		t.Fatal(err)
	}
	type summary struct {
		Topic, Endpoint, DeadLetterTopic, Audience, Account string
		AckDeadline, MinBackoff, MaxBackoff                 time.Duration
		MaxDeliveries                                       int32
	}
	want := summary{
		Topic: s.TopicName(p.Topic), Endpoint: s.Frontends["AggregateOrders"].URL() + "/",
		DeadLetterTopic: s.TopicName(p.DeadLetterTopic), Audience: s.serviceURL(s.Frontends["AggregateOrders"]), Account: p.ServiceAccountEmail,
		AckDeadline: time.Duration(p.AckDeadlineSeconds) * time.Second, MinBackoff: p.MinimumBackoff.Duration, MaxBackoff: p.MaximumBackoff.Duration,
		MaxDeliveries: int32(p.MaxDeliveryAttempts),
	}
	got := summary{
		Topic: sub.GetTopic(), Endpoint: sub.GetPushConfig().GetPushEndpoint(),
		DeadLetterTopic: sub.GetDeadLetterPolicy().GetDeadLetterTopic(),
		Audience:        sub.GetPushConfig().GetOidcToken().GetAudience(), Account: sub.GetPushConfig().GetOidcToken().GetServiceAccountEmail(),
		AckDeadline:   time.Duration(sub.GetAckDeadlineSeconds()) * time.Second,
		MinBackoff:    sub.GetRetryPolicy().GetMinimumBackoff().AsDuration(),
		MaxBackoff:    sub.GetRetryPolicy().GetMaximumBackoff().AsDuration(),
		MaxDeliveries: sub.GetDeadLetterPolicy().GetMaxDeliveryAttempts(),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("push subscription on the emulator (-terraform +emulator):\n%s", diff)
	}

	r := acked(ctx, t, s, publish(ctx, t, s, []byte(stormOrder), orderTime))
	var env struct {
		Subscription    string `json:"subscription"`
		DeliveryAttempt *int   `json:"deliveryAttempt"`
	}
	if err := json.Unmarshal(r.Body, &env); err != nil {
		t.Fatal(err)
	}
	if env.Subscription != s.SubscriptionName(p.Name) {
		t.Errorf("push body names subscription %q, want %q", env.Subscription, s.SubscriptionName(p.Name))
	}
	t.Logf("emulator gaps seen: Authorization header %q, User-Agent %q, deliveryAttempt in body %v",
		r.Header.Get("Authorization"), r.Header.Get("User-Agent"), env.DeliveryAttempt)
}
