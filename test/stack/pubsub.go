package stack

import (
	"context"
	"errors"
	"fmt"
	"time"

	"cloud.google.com/go/pubsub/v2"
	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/alpinashop/alpipe/internal/dashboard"
)

// TopicName is a topic's full name in the stack's project.
func (s *Stack) TopicName(id string) string { return "projects/" + s.Project + "/topics/" + id }

// SubscriptionName is a subscription's full name in the stack's project.
func (s *Stack) SubscriptionName(id string) string {
	return "projects/" + s.Project + "/subscriptions/" + id
}

// setUpPubSub creates pubsub.tf's topics and subscriptions on the emulator,
// each push subscription pushing to its service's front end.
func (s *Stack) setUpPubSub(ctx context.Context) error {
	var err error
	if s.PubSub, err = pubsub.NewClient(ctx, s.Project); err != nil {
		return fmt.Errorf("pubsub client: %w", err)
	}
	d := &s.Deployment
	for _, t := range d.Topics {
		if _, err := s.PubSub.TopicAdminClient.CreateTopic(ctx, &pubsubpb.Topic{Name: s.TopicName(t)}); err != nil {
			return fmt.Errorf("create topic %s: %w", t, err)
		}
		s.topics = append(s.topics, s.TopicName(t))
	}
	for _, p := range d.PullSubscriptions {
		sub := &pubsubpb.Subscription{Name: s.SubscriptionName(p.Name), Topic: s.TopicName(p.Topic), AckDeadlineSeconds: int32(p.AckDeadlineSeconds)}
		if _, err := s.PubSub.SubscriptionAdminClient.CreateSubscription(ctx, sub); err != nil {
			return fmt.Errorf("create subscription %s: %w", p.Name, err)
		}
		s.subs = append(s.subs, sub.Name)
	}
	for _, p := range d.PushSubscriptions {
		f := s.Frontends[p.Function]
		sub := &pubsubpb.Subscription{
			Name: s.SubscriptionName(p.Name), Topic: s.TopicName(p.Topic),
			AckDeadlineSeconds: int32(p.AckDeadlineSeconds),
			PushConfig: &pubsubpb.PushConfig{
				PushEndpoint: f.URL() + "/",
				AuthenticationMethod: &pubsubpb.PushConfig_OidcToken_{OidcToken: &pubsubpb.PushConfig_OidcToken{
					ServiceAccountEmail: p.ServiceAccountEmail, Audience: s.serviceURL(f),
				}},
			},
			RetryPolicy: &pubsubpb.RetryPolicy{MinimumBackoff: durationpb.New(p.MinimumBackoff.Duration), MaximumBackoff: durationpb.New(p.MaximumBackoff.Duration)},
		}
		if p.DeadLetterTopic != "" {
			sub.DeadLetterPolicy = &pubsubpb.DeadLetterPolicy{DeadLetterTopic: s.TopicName(p.DeadLetterTopic), MaxDeliveryAttempts: int32(p.MaxDeliveryAttempts)}
		}
		if _, err := s.PubSub.SubscriptionAdminClient.CreateSubscription(ctx, sub); err != nil {
			return fmt.Errorf("create subscription %s: %w", p.Name, err)
		}
		s.subs = append(s.subs, sub.Name)
	}
	return nil
}

func (s *Stack) tearDownPubSub(ctx context.Context) error {
	if s.PubSub == nil {
		return nil
	}
	var errs []error
	for _, sub := range s.subs {
		errs = append(errs, s.PubSub.SubscriptionAdminClient.DeleteSubscription(ctx, &pubsubpb.DeleteSubscriptionRequest{Subscription: sub}))
	}
	for _, t := range s.topics {
		errs = append(errs, s.PubSub.TopicAdminClient.DeleteTopic(ctx, &pubsubpb.DeleteTopicRequest{Topic: t}))
	}
	errs = append(errs, s.PubSub.Close())
	return errors.Join(errs...)
}

// Backlog is what the stack can tell of the backlog of the subscription
// pushing to AggregateOrders without Cloud Monitoring, which the emulator
// lacks: the messages pushed that got no 2xx yet and have delivery attempts
// left, and the real time (the emulator's) since the oldest's first push. A
// message not pushed yet is not counted: the emulator pushes within
// milliseconds of a publish.
func (s *Stack) Backlog(context.Context) (dashboard.Backlog, error) {
	f, ok := s.Frontends["AggregateOrders"]
	if !ok {
		return dashboard.Backlog{}, errors.New("no service runs AggregateOrders")
	}
	maxAttempts := 0
	for _, p := range s.Deployment.PushSubscriptions {
		if p.Function == "AggregateOrders" && p.DeadLetterTopic != "" {
			maxAttempts = p.MaxDeliveryAttempts
		}
	}
	type pushes struct {
		first    time.Time
		attempts int
		acked    bool
	}
	byID := map[string]*pushes{}
	for _, r := range f.Requests() {
		id, _ := Pushed(r.Body)
		if id == "" {
			continue
		}
		p, ok := byID[id]
		if !ok {
			p = &pushes{first: r.At}
			byID[id] = p
		}
		p.attempts++
		p.acked = p.acked || r.Acked()
	}
	var b dashboard.Backlog
	for _, p := range byID {
		if p.acked || maxAttempts > 0 && p.attempts >= maxAttempts {
			continue
		}
		b.Undelivered++
		b.OldestUnackedAgeSeconds = max(b.OldestUnackedAgeSeconds, int64(time.Since(p.first)/time.Second))
	}
	return b, nil
}
