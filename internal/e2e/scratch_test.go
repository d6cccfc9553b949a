package e2e

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/pubsub/v2"
	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"google.golang.org/protobuf/types/known/durationpb"
)

func TestScratch(t *testing.T) {
	ctx := context.Background()
	var mu sync.Mutex
	n := 0
	start := time.Now()
	done := make(chan struct{}, 10)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		n++
		k := n
		mu.Unlock()
		t.Logf("%v delivery %d %s %s hdr=%v", time.Since(start), k, r.URL.Path, b, r.Header)
		if k == 1 {
			w.WriteHeader(503)
			return
		}
		w.WriteHeader(204)
		done <- struct{}{}
	}))
	defer ts.Close()
	c, err := pubsub.NewClient(ctx, "scratch-proj")
	if err != nil {
		t.Fatal(err)
	}
	topic := "projects/scratch-proj/topics/t" + time.Now().Format("150405")
	if _, err := c.TopicAdminClient.CreateTopic(ctx, &pubsubpb.Topic{Name: topic}); err != nil {
		t.Fatal(err)
	}
	sub, err := c.SubscriptionAdminClient.CreateSubscription(ctx, &pubsubpb.Subscription{
		Name: "projects/scratch-proj/subscriptions/s" + time.Now().Format("150405"), Topic: topic,
		PushConfig:         &pubsubpb.PushConfig{PushEndpoint: ts.URL + "/AggregateOrders"},
		AckDeadlineSeconds: 10,
		RetryPolicy:        &pubsubpb.RetryPolicy{MinimumBackoff: durationpb.New(5*time.Second), MaximumBackoff: durationpb.New(10*time.Second)},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("sub %+v", sub)
	got, _ := c.SubscriptionAdminClient.GetSubscription(ctx, &pubsubpb.GetSubscriptionRequest{Subscription: sub.Name})
	t.Logf("get %+v", got)
	p := c.Publisher(topic)
	start = time.Now()
	id, err := p.Publish(ctx, &pubsub.Message{Data: []byte(`{"a":1}`), Attributes: map[string]string{"x": "y"}}).Get(ctx)
	t.Logf("published %s after %v", id, time.Since(start))
	select {
	case <-done:
		t.Logf("acked after %v", time.Since(start))
	case <-time.After(60 * time.Second):
		t.Fatal("timeout")
	}
	for i := 0; i < 3; i++ {
		s := time.Now()
		id, _ := p.Publish(ctx, &pubsub.Message{Data: []byte(`{"a":2}`)}).Get(ctx)
		<-done
		t.Logf("%s: push latency %v", id, time.Since(s))
	}
	p.Stop()
}
