package deploy

import (
	"strings"
	"testing"

	"github.com/zclconf/go-cty/cty"
)

// Dead lettering needs four things, or messages loop forever or vanish: the
// policy on the push subscription, a subscription on the dead-letter topic,
// and the Pub/Sub service agent's publisher grant on that topic and
// subscriber grant on the source subscription.
func TestDeadLetterTopicIsWired(t *testing.T) {
	cfg := loadTerraform(t)
	ev := deployed(t, cfg, nil)

	var withPolicy []resource
	for _, r := range cfg.ofType("google_pubsub_subscription") {
		if nested(r.Block, "dead_letter_policy") != nil {
			withPolicy = append(withPolicy, r)
		}
	}
	if len(withPolicy) == 0 {
		t.Fatal("no subscription has a dead_letter_policy: a poison order would be redelivered forever")
	}
	for _, src := range withPolicy {
		t.Run(src.addr(), func(t *testing.T) {
			if nested(src.Block, "push_config") == nil {
				t.Error("the dead-letter policy belongs on the push subscription")
			}
			a, ok := attr(src.Block, "dead_letter_policy", "dead_letter_topic")
			if !ok {
				t.Fatal("dead_letter_policy.dead_letter_topic missing")
			}
			topicRef := traversal(a.Expr)
			if !strings.HasPrefix(topicRef, "google_pubsub_topic.") || !strings.HasSuffix(topicRef, ".id") {
				t.Fatalf("dead_letter_topic = %q, want a google_pubsub_topic reference", topicRef)
			}
			topic := strings.TrimSuffix(topicRef, ".id")
			if a, ok := attr(src.Block, "dead_letter_policy", "max_delivery_attempts"); ok {
				n := ev.eval(t, a.Expr, nil)
				bf := n.AsBigFloat()
				if v, _ := bf.Int64(); v < 5 || v > 100 {
					t.Errorf("max_delivery_attempts = %d, Pub/Sub accepts 5..100", v)
				}
			} else {
				t.Error("max_delivery_attempts missing (the default of 5 should be a choice)")
			}
			if nested(src.Block, "retry_policy") == nil {
				t.Error("no retry_policy: redeliveries would be immediate, hammering a contended window")
			}
			if _, ok := attr(src.Block, "ack_deadline_seconds"); !ok {
				t.Error("ack_deadline_seconds missing: it is the push request timeout")
			}

			// A subscription on the dead-letter topic.
			held := false
			for _, s := range cfg.ofType("google_pubsub_subscription") {
				if a, ok := s.Block.Body.Attributes["topic"]; ok && strings.HasPrefix(traversal(a.Expr), topic+".") {
					held = true
					if nested(s.Block, "push_config") != nil {
						t.Errorf("%s pushes dead letters somewhere; keep them in a pull subscription for people", s.addr())
					}
					if nested(s.Block, "expiration_policy") == nil {
						t.Errorf("%s has no expiration_policy: an idle subscription expires after 31 days and dead letters are lost", s.addr())
					}
				}
			}
			if !held {
				t.Errorf("no subscription on %s: dead-lettered orders would be dropped", topic)
			}

			publisher := findGrant(t, ev, cfg, "google_pubsub_topic_iam_member", "topic", topic+".", "roles/pubsub.publisher")
			if !publisher {
				t.Errorf("the Pub/Sub service agent cannot publish to %s", topic)
			}
			subscriber := findGrant(t, ev, cfg, "google_pubsub_subscription_iam_member", "subscription", src.addr()+"[each.key].", "roles/pubsub.subscriber")
			if !subscriber {
				t.Errorf("the Pub/Sub service agent cannot acknowledge on %s, so it never forwards dead letters", src.addr())
			}
		})
	}

	tmpl, ok := cfg.Locals["pubsub_service_agent"]
	if !ok {
		t.Fatal("local.pubsub_service_agent missing")
	}
	// Render with a known project number: the agent's address is fixed by Google.
	ctx := ev.ctx.NewChild()
	ctx.Variables = map[string]cty.Value{"data": cty.ObjectVal(map[string]cty.Value{
		"google_project": cty.ObjectVal(map[string]cty.Value{"this": cty.ObjectVal(map[string]cty.Value{"number": cty.StringVal("123456789")})}),
	})}
	v, diags := tmpl.Expr.Value(ctx)
	if diags.HasErrors() {
		t.Fatalf("pubsub_service_agent: %s", diags.Error())
	}
	if got, want := v.AsString(), "serviceAccount:service-123456789@gcp-sa-pubsub.iam.gserviceaccount.com"; got != want {
		t.Errorf("pubsub_service_agent = %q, want %q", got, want)
	}
}

// findGrant reports whether a resource of typ binds role to the Pub/Sub
// service agent on a parent whose reference starts with parentPrefix.
func findGrant(t *testing.T, ev *evaluator, cfg *tfConfig, typ, parentAttr, parentPrefix, role string) bool {
	t.Helper()
	for _, g := range cfg.ofType(typ) {
		p, ok := g.Block.Body.Attributes[parentAttr]
		if !ok || !strings.HasPrefix(traversal(p.Expr), parentPrefix) {
			continue
		}
		if ev.str(t, g.Block.Body.Attributes["role"].Expr, nil) != role {
			continue
		}
		if traversal(g.Block.Body.Attributes["member"].Expr) == "local.pubsub_service_agent" {
			return true
		}
	}
	return false
}
