package stack

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/pubsub/v2"
	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/docstore"
	fsstore "github.com/alpinashop/alpipe/internal/docstore/firestore"
	"github.com/alpinashop/alpipe/internal/order"
	"github.com/alpinashop/alpipe/internal/stream"
	"github.com/alpinashop/alpipe/test/tfconfig"
)

// stormOrder is one order of 89.90 made at 17:02 UTC (orderTime), in the
// ES window of 17:00-18:00.
const stormOrder = `{"pedido_id":"P-STORM","cliente_id":"C-1","pais":"ES","importe_total":"89.90","lineas":[{"sku":"MOCH-40L-AZ","cantidad":1,"precio_unitario":"89.90"}]}`

// TestDeadLetters: a valid order that meets only 5xx (the service down)
// goes, after the subscription's max delivery attempts, to the dead-letter
// topic, where its pull subscription holds it. (An invalid message is
// recorded and acknowledged: TestDemoStories' P-001005.)
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
	ctx := testContext(t, 2*time.Minute)
	setClock(t, s, storyStart.Add(5*time.Minute))
	fe := s.Frontends["AggregateOrders"]
	// The service goes down: Cloud Run's front end answers 503.
	check(t, s.Processes["AggregateOrders"].Stop())
	down := publish(ctx, t, s, []byte(stormOrder), orderTime)
	dlq, err := s.deadLetterSubscription()
	check(t, err)
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
	check(t, err)
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
	if diff := cmp.Diff(slices.Repeat([]int{503}, maxAttempts), statuses); diff != "" {
		t.Errorf("deliveries before dead-lettering, each answered 503 as the service is down (-want +got):\n%s", diff)
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
	ctx := testContext(t, time.Minute)
	pushes := s.Deployment.PushSubscriptions
	if len(pushes) != 1 {
		t.Fatalf("%d push subscriptions in Terraform, want 1", len(pushes))
	}
	p := pushes[0]
	sub, err := s.PubSub.SubscriptionAdminClient.GetSubscription(ctx, &pubsubpb.GetSubscriptionRequest{Subscription: s.SubscriptionName(p.Name)})
	check(t, err)
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
	check(t, json.Unmarshal(r.Body, &env))
	if env.Subscription != s.SubscriptionName(p.Name) {
		t.Errorf("push body names subscription %q, want %q", env.Subscription, s.SubscriptionName(p.Name))
	}
	t.Logf("emulator gaps seen: Authorization header %q, User-Agent %q, deliveryAttempt in body %v",
		r.Header.Get("Authorization"), r.Header.Get("User-Agent"), env.DeliveryAttempt)
}

// twoSKUOrder is one order with lines of two SKUs (one of them in two
// lines, one written in lower case), made at 17:02 UTC.
const twoSKUOrder = `{"pedido_id":"P-DOS","cliente_id":"C-2","pais":"ES","importe_total":"204.75","lineas":[` +
	`{"sku":"MOCH-40L-AZ","cantidad":2,"precio_unitario":"89.90"},` +
	`{"sku":"gorro-lana","cantidad":1,"precio_unitario":"12.50"},` +
	`{"sku":"MOCH-40L-AZ","cantidad":1,"precio_unitario":"12.45"}]}`

// TestRedeliveryStormCountsOnceInBothAggregations: the production binary
// runs both shipped aggregations. An order with lines of two SKUs arrives
// in several messages at once (the web app published it five times) and
// one of them is delivered three times (its answers lost after handling).
// It yields panes in both panes tables, each counting it once: in its
// country's hour, and per SKU in each of the four sliding windows of its
// event time, each with the amounts of that SKU's lines.
func TestRedeliveryStormCountsOnceInBothAggregations(t *testing.T) {
	t.Parallel()
	s := need(t, Options{})
	ctx := testContext(t, time.Minute)
	setClock(t, s, storyStart.Add(5*time.Minute))
	fe := s.Frontends["AggregateOrders"]
	const copies, lost = 5, 2
	// The answers to the deliveries of the first copy pushed are lost
	// twice. The fault is in place before anything is published: the first
	// delivery may come before Publish returns.
	var firstMu sync.Mutex
	first := ""
	fe.Inject(func(b []byte) bool {
		m, p := Pushed(b)
		if p != "P-DOS" {
			return false
		}
		firstMu.Lock()
		defer firstMu.Unlock()
		if first == "" {
			first = m
		}
		return m == first
	}, LoseAnswer, lost)
	topic, err := s.ordersTopic()
	check(t, err)
	pub := s.PubSub.Publisher(topic)
	defer pub.Stop()
	var results []*pubsub.PublishResult
	for range copies { // at once
		results = append(results, pub.Publish(ctx, &pubsub.Message{
			Data: []byte(twoSKUOrder), Attributes: map[string]string{order.EventTimeAttribute: orderTime},
		}))
	}
	for _, r := range results {
		id, err := r.Get(ctx)
		check(t, err)
		acked(ctx, t, s, id)
	}
	handled := 0
	for _, r := range fe.Requests() {
		if _, p := Pushed(r.Body); p == "P-DOS" && r.Called {
			handled++
		}
	}
	if handled < copies+lost {
		t.Errorf("the function handled the order %d times, want at least %d (every copy and every redelivery)", handled, copies+lost)
	}

	// W = 18:05 (idle source): every window of 17:02 has closed.
	setClock(t, s, storyStart.Add(75*time.Minute))
	fireTick(ctx, t, s)

	// Every pane counts the order once.
	panes := func(table, key string) []string {
		return rowLines(s, table, "%s %s %s pedidos=%s importe=%s unidades=%s",
			"window_start", key, "timing", "pedidos", "importe", "unidades")
	}
	if diff := cmp.Diff([]string{
		"2026-03-14T17:00:00Z ES ON_TIME pedidos=1 importe=204.75 unidades=4",
	}, panes("ventas_hora_pais_paneles", "pais")); diff != "" {
		t.Errorf("ventas_hora_pais (-want +got):\n%s", diff)
	}
	var want []string
	for _, start := range []string{"16:15", "16:30", "16:45", "17:00"} {
		want = append(want,
			"2026-03-14T"+start+":00Z GORRO-LANA ON_TIME pedidos=1 importe=12.50 unidades=1",
			"2026-03-14T"+start+":00Z MOCH-40L-AZ ON_TIME pedidos=1 importe=192.25 unidades=3")
	}
	sort.Strings(want)
	if diff := cmp.Diff(want, panes("ventas_sku_hora_movil_paneles", "sku")); diff != "" {
		t.Errorf("ventas_sku_hora_movil (-want +got):\n%s", diff)
	}
}

// TestPoisonCellDoesNotStopTheTick: one window's state document in
// Firestore is corrupted behind the production binary's back. The
// scheduler's ticks still answer 200 and report that window with its error
// (in the answer and as a failing_cell log field); another window gets its
// panes and expires; an order for the poisoned window that arrives
// meanwhile is accepted and parked, and the window is kept past its expiry.
// Once the document is repaired, the window emits the ON_TIME pane it owes,
// with every order, and expires.
func TestPoisonCellDoesNotStopTheTick(t *testing.T) {
	t.Parallel()
	s := need(t, Options{})
	ctx := testContext(t, 2*time.Minute)
	clock := func(minutes int) {
		t.Helper()
		setClock(t, s, storyStart.Add(time.Duration(minutes)*time.Minute))
	}
	clock(5)
	publishAcked(ctx, t, s, "P-POISON-ES", "ES", orderTime)
	publishAcked(ctx, t, s, "P-POISON-FR", "FR", "2026-03-14T18:03:00+01:00")
	tickAt := func(minutes int) stream.AggregationTick {
		t.Helper()
		clock(minutes)
		res := fireTick(ctx, t, s) // 200 for the windows it could process
		i := slices.IndexFunc(res.Aggregations, func(a stream.AggregationTick) bool { return a.Aggregation == "ventas_hora_pais" })
		if i < 0 {
			t.Fatalf("tick answer %+v has no ventas_hora_pais", res)
		}
		a := res.Aggregations[i]
		t.Logf("%s, failing %v", stream.TickLine(s.Now().Format("15:04"), a, true), a.Failing)
		return a
	}
	tickAt(10) // EARLY panes: the window's state document exists in Firestore now

	store, err := fsstore.New(s.Firestore)
	check(t, err)
	// The window 17:00-18:00 UTC of both orders: one state document. Times
	// below are UTC, as the tick log lines print them.
	const (
		agg  = "aggregations/ventas_hora_pais"
		path = agg + "/state/20260314T170000Z_0"
	)
	original := getDocument(ctx, t, store, path)
	putDocument(ctx, t, store, path, []byte(`{"layout":3,"keys":"garbage"}`))

	wantFailing := func(at stream.AggregationTick) {
		t.Helper()
		if len(at.Failing) != 1 || at.Failing[0].Path != path || !strings.Contains(at.Failing[0].Error, "decode "+path) {
			t.Errorf("failing %+v; want the window %s with its decode error", at.Failing, path)
		}
	}
	// An order for the poisoned window (on time: parked by the fold) and
	// one for the next window (18:00-19:00), which goes on.
	clock(65)
	publishAcked(ctx, t, s, "P-POISON-ES-2", "ES", "2026-03-14T18:50:00+01:00")
	publishAcked(ctx, t, s, "P-POISON-DE", "DE", "2026-03-14T19:02:00+01:00")
	at := tickAt(70) // DE's EARLY pane; 17:00 failing
	wantFailing(at)
	at = tickAt(135) // W = 19:05 >= 19:00: DE's ON_TIME pane
	wantFailing(at)
	at = tickAt(195) // W = 20:05 >= 17:00's expiry (20:00): kept, as it fails
	wantFailing(at)
	if at.Expired != 0 {
		t.Errorf("expired %d keys at +195 min, want 0 (17:00 is failing; 18:00 expires at 21:00)", at.Expired)
	}
	logged := logEntries(t, s.Processes["AdvanceWatermark"].Output(), func(m map[string]any) bool {
		return m["failing_cell"] == path && m["error"] != nil && m["error"] != ""
	})
	if len(logged) == 0 {
		t.Errorf("no log line with failing_cell=%s and error: the log-based metric counts nothing", path)
	}

	// Repaired: the next tick folds the parked order, emits the ON_TIME
	// panes 17:00 owes and expires it; then 18:00 expires on time.
	putDocument(ctx, t, store, path, original)
	at = tickAt(200)
	if len(at.Failing) != 0 || at.Expired != 2 {
		t.Errorf("after the repair: failing %+v, expired %d; want none failing and ES and FR of 17:00 expired", at.Failing, at.Expired)
	}
	at = tickAt(255) // W = 21:05 >= 21:00: DE's window expires
	if at.Expired != 1 {
		t.Errorf("expired %d keys at +255 min, want 1 (DE)", at.Expired)
	}
	got := rowLines(s, "ventas_hora_pais_paneles", "%s #%s %s pedidos=%s", "pais", "pane_index", "timing", "pedidos")
	t.Logf("panes: %s", strings.Join(got, ", "))
	want := []string{
		"DE #0 EARLY pedidos=1", "DE #1 ON_TIME pedidos=1",
		"ES #0 EARLY pedidos=1", "ES #1 ON_TIME pedidos=2",
		"FR #0 EARLY pedidos=1", "FR #1 ON_TIME pedidos=1",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("panes in BigQuery (-want +got):\n%s", diff)
	}
	for _, coll := range []string{agg + "/state", agg + "/parked"} {
		if docs, err := store.List(ctx, coll); err != nil || len(docs) != 0 {
			t.Errorf("%s: %d documents left after every window expired, %v", coll, len(docs), err)
		}
	}
}

// getDocument returns the bytes of the document at path, which must exist.
func getDocument(ctx context.Context, t *testing.T, store docstore.Store, path string) []byte {
	t.Helper()
	var d docstore.Doc
	err := store.RunTx(ctx, func(_ context.Context, tx docstore.Tx) error {
		docs, err := tx.Get(path)
		if err != nil {
			return err
		}
		d = docs[0]
		return nil
	})
	if err != nil || !d.Exists {
		t.Fatalf("read %s: exists %v, %v", path, d.Exists, err)
	}
	return d.Data
}

// putDocument writes data at path through the store port, as a bad hand
// edit or another binary would.
func putDocument(ctx context.Context, t *testing.T, store docstore.Store, path string, data []byte) {
	t.Helper()
	err := store.RunTx(ctx, func(_ context.Context, tx docstore.Tx) error {
		return tx.Set(docstore.Doc{Path: path, Data: data})
	})
	if err != nil {
		t.Fatalf("write %s: %v", path, err)
	}
}
