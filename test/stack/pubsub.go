package stack

import (
	"context"
	"errors"
	"fmt"

	"cloud.google.com/go/pubsub/v2"
	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"google.golang.org/protobuf/types/known/durationpb"
)

// TopicName is a topic's full name in the stack's project.
func (s *Stack) TopicName(id string) string { return "projects/" + s.Project + "/topics/" + id }

// SubscriptionName is a subscription's full name in the stack's project.
func (s *Stack) SubscriptionName(id string) string {
	return "projects/" + s.Project + "/subscriptions/" + id
}

// setUpPubSub creates pubsub.tf's topics and subscriptions on the emulator,
// each push subscription pushing to its service's front end.
func (s *Stack) setUpPubSub(ctx context.Context, byName map[string]*Frontend) error {
	var err error
	if s.PubSub, err = pubsub.NewClient(ctx, s.Project); err != nil {
		return fmt.Errorf("pubsub client: %w", err)
	}
	d := s.Deployment
	topics, err := d.Topics()
	if err != nil {
		return err
	}
	for _, t := range topics {
		if _, err := s.PubSub.TopicAdminClient.CreateTopic(ctx, &pubsubpb.Topic{Name: s.TopicName(t)}); err != nil {
			return fmt.Errorf("create topic %s: %w", t, err)
		}
		s.topics = append(s.topics, s.TopicName(t))
	}
	pulls, err := d.PullSubscriptions()
	if err != nil {
		return err
	}
	for _, p := range pulls {
		sub := &pubsubpb.Subscription{Name: s.SubscriptionName(p.Name), Topic: s.TopicName(p.Topic), AckDeadlineSeconds: int32(p.AckDeadline.Seconds())}
		if _, err := s.PubSub.SubscriptionAdminClient.CreateSubscription(ctx, sub); err != nil {
			return fmt.Errorf("create subscription %s: %w", p.Name, err)
		}
		s.subs = append(s.subs, sub.Name)
	}
	pushes, err := d.PushSubscriptions()
	if err != nil {
		return err
	}
	for _, p := range pushes {
		f, ok := byName[p.Service]
		if !ok {
			return fmt.Errorf("push subscription %s targets %s, which is not a deployed service", p.Name, p.Service)
		}
		pc := &pubsubpb.PushConfig{PushEndpoint: f.URL() + "/"}
		if p.OIDCAudience != "" {
			pc.AuthenticationMethod = &pubsubpb.PushConfig_OidcToken_{OidcToken: &pubsubpb.PushConfig_OidcToken{
				ServiceAccountEmail: p.OIDCAccountEmail, Audience: p.OIDCAudience,
			}}
		}
		if p.NoWrapper {
			pc.Wrapper = &pubsubpb.PushConfig_NoWrapper_{NoWrapper: &pubsubpb.PushConfig_NoWrapper{}}
		}
		sub := &pubsubpb.Subscription{
			Name: s.SubscriptionName(p.Name), Topic: s.TopicName(p.Topic),
			AckDeadlineSeconds: int32(p.AckDeadline.Seconds()),
			PushConfig:         pc,
		}
		if p.MinBackoff > 0 || p.MaxBackoff > 0 {
			sub.RetryPolicy = &pubsubpb.RetryPolicy{MinimumBackoff: durationpb.New(p.MinBackoff), MaximumBackoff: durationpb.New(p.MaxBackoff)}
		}
		if p.DeadLetterTopic != "" {
			sub.DeadLetterPolicy = &pubsubpb.DeadLetterPolicy{DeadLetterTopic: s.TopicName(p.DeadLetterTopic), MaxDeliveryAttempts: int32(p.MaxDeliveries)}
		}
		if _, err := s.PubSub.SubscriptionAdminClient.CreateSubscription(ctx, sub); err != nil {
			return fmt.Errorf("create subscription %s: %w", p.Name, err)
		}
		s.subs = append(s.subs, sub.Name)
	}
	return nil
}

// PushSubscription is the full name of the push subscription to a function.
func (s *Stack) PushSubscription(function string) (string, error) {
	p, ok := s.Processes[function]
	if !ok {
		return "", fmt.Errorf("no service runs %s", function)
	}
	pushes, err := s.Deployment.PushSubscriptions()
	if err != nil {
		return "", err
	}
	for _, sub := range pushes {
		if sub.Service == p.Service.Name {
			return s.SubscriptionName(sub.Name), nil
		}
	}
	return "", fmt.Errorf("no push subscription to %s", p.Service.Name)
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
