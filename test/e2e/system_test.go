package e2e

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	gfs "cloud.google.com/go/firestore"
	"cloud.google.com/go/pubsub/v2"
	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"

	"github.com/alpinashop/alpipe/functions"
	"github.com/alpinashop/alpipe/internal/config"
	fsstore "github.com/alpinashop/alpipe/internal/docstore/firestore"
	"github.com/alpinashop/alpipe/internal/local"
	"github.com/alpinashop/alpipe/internal/localapi"
	"github.com/alpinashop/alpipe/internal/logging"
	"github.com/alpinashop/alpipe/test/stack"
)

// storyStart is where the virtual clock starts: before the first step of
// the orders story, as in the embedded demo.
var storyStart = time.Date(2026, 3, 14, 17, 0, 0, 0, time.UTC)

// ackDeadline is the push request timeout. It exceeds the ~30 s a contended
// transaction can stall on the Firestore emulator, so that a slow answer is
// not taken for a failure and redelivered.
const ackDeadline = 60 * time.Second

// system is the running whole, one per test.
type system struct {
	srv     *local.Server
	front   *stack.Frontend // between the emulator and AggregateOrders: records and injects
	project string          // both emulators' project: unique per run, so runs sharing the emulators do not meet
	ps      *pubsub.Client
	topic   string // projects/<project>/topics/pedidos-nuevos
	sub     string // its push subscription
	fs      *gfs.Client
	store   *fsstore.Store    // the same Firestore database the functions use, for checks
	logs    *stack.SyncBuffer // the server's log, shown when a test fails
	data    string
}

// need starts the system for the test and stops it at its end, or skips the
// test when the emulators are not there.
func need(t *testing.T) *system {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: the end-to-end test needs the Firestore and Pub/Sub emulators")
	}
	if missing := stack.MissingEmulators(); len(missing) > 0 {
		t.Skipf("%s not set: scripts/e2e.sh (or scripts/test.sh) starts both emulators", strings.Join(missing, " and "))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := start(ctx)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("server log:\n%s", s.logs.String())
		}
		if err := s.close(); err != nil {
			t.Errorf("stop the end-to-end system: %v", err)
		}
	})
	if err != nil {
		t.Fatalf("start the end-to-end system: %v", err)
	}
	return s
}

// start brings up the local server on the Firestore emulator, a front end
// before its AggregateOrders, and topic pedidos-nuevos with a push
// subscription to it on the Pub/Sub emulator. What it started before
// failing is in the system it returns, for close.
func start(ctx context.Context) (*system, error) {
	s := &system{project: "alpipe-e2e-" + strings.ToLower(rand.Text()[:12]), logs: &stack.SyncBuffer{}}
	var err error
	if s.data, err = os.MkdirTemp("", "alpipe-e2e-"); err != nil {
		return s, err
	}
	s.srv, err = local.Start(ctx, local.Options{
		Addr:    "127.0.0.1:0",
		DataDir: s.data,
		Clock:   local.VirtualClock(storyStart),
		Logger:  logging.New(s.logs, slog.LevelInfo),
		Env: map[string]string{
			"STATE_STORE":          config.Firestore,
			"GOOGLE_CLOUD_PROJECT": s.project,
		},
	})
	if err != nil {
		return s, fmt.Errorf("start local server: %w", err)
	}
	if s.fs, err = gfs.NewClient(ctx, s.project); err != nil {
		return s, fmt.Errorf("firestore client: %w", err)
	}
	if s.store, err = fsstore.New(s.fs); err != nil {
		return s, err
	}

	s.front = stack.NewFrontend(functions.AggregateOrdersName, func() string { return s.srv.URL }, ackDeadline)

	if s.ps, err = pubsub.NewClient(ctx, s.project); err != nil {
		return s, fmt.Errorf("pubsub client: %w", err)
	}
	s.topic = "projects/" + s.project + "/topics/" + localapi.Topic
	if _, err := s.ps.TopicAdminClient.CreateTopic(ctx, &pubsubpb.Topic{Name: s.topic}); err != nil {
		return s, fmt.Errorf("create topic %s: %w", s.topic, err)
	}
	sub := &pubsubpb.Subscription{
		Name:  "projects/" + s.project + "/subscriptions/" + localapi.Topic + "-push",
		Topic: s.topic,
		// AggregateOrders' path on the front end, which forwards it to the server.
		PushConfig:         &pubsubpb.PushConfig{PushEndpoint: s.front.URL() + "/" + functions.AggregateOrdersName},
		AckDeadlineSeconds: int32(ackDeadline / time.Second),
	}
	if _, err := s.ps.SubscriptionAdminClient.CreateSubscription(ctx, sub); err != nil {
		return s, fmt.Errorf("create subscription %s: %w", sub.Name, err)
	}
	s.sub = sub.Name
	return s, nil
}

// close stops the pushes first (deleting the subscription), then the rest.
func (s *system) close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var errs []error
	if s.ps != nil {
		if s.sub != "" {
			errs = append(errs, s.ps.SubscriptionAdminClient.DeleteSubscription(ctx, &pubsubpb.DeleteSubscriptionRequest{Subscription: s.sub}))
		}
		if s.topic != "" {
			errs = append(errs, s.ps.TopicAdminClient.DeleteTopic(ctx, &pubsubpb.DeleteTopicRequest{Topic: s.topic}))
		}
		errs = append(errs, s.ps.Close())
	}
	if s.front != nil {
		s.front.Close()
	}
	if s.fs != nil {
		errs = append(errs, s.fs.Close())
	}
	if s.srv != nil {
		errs = append(errs, s.srv.Shutdown("tests done"))
	}
	errs = append(errs, os.RemoveAll(s.data))
	return errors.Join(errs...)
}
