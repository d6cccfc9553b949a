package tfconfig

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/zclconf/go-cty/cty"
)

func openFixture(t *testing.T, vars map[string]cty.Value) *Deployment {
	t.Helper()
	cfg, err := Load("testdata/module")
	if err != nil {
		t.Fatal(err)
	}
	d, err := OpenConfig(cfg, vars)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestDeploymentAccessors(t *testing.T) {
	d := openFixture(t, StringVars(map[string]string{"project_id": "run-1234"}))
	common := map[string]string{
		"GOOGLE_CLOUD_PROJECT": "run-1234",
		"FIRESTORE_DATABASE":   "pipeline",
		"STAGING_BUCKET":       "stage",
	}
	with := func(extra map[string]string) map[string]string {
		out := map[string]string{}
		for _, m := range []map[string]string{common, extra} {
			for k, v := range m {
				out[k] = v
			}
		}
		return out
	}
	uri := func(s string) string {
		return "https://" + s + "-" + PlaceholderProjectNumber + ".europe-west1.run.app"
	}

	tests := []struct {
		name string
		got  func() (any, error)
		want any
	}{
		{
			name: "services: services.json in the deployment's project and buckets, with trigger and URI",
			got:  func() (any, error) { return d.Services() },
			want: []Service{
				// The landing bucket is named after the project: the file's
				// name, of the file's project, becomes this deployment's.
				{Function: "Ingest", Name: "svc-ingest", Env: with(map[string]string{"FUNCTION_TARGET": "Ingest", "LANDING_BUCKET": "land-run-1234"}),
					Timeout: 540 * time.Second, Concurrency: 1, Trigger: "storage", URI: uri("svc-ingest")},
				{Function: "Orders", Name: "svc-orders", Env: with(map[string]string{
					"FUNCTION_TARGET": "Orders",
					"AGENT":           "serviceAccount:service-" + PlaceholderProjectNumber + "@gcp-sa-pubsub.iam.gserviceaccount.com",
				}), Timeout: time.Minute, Concurrency: 40, Trigger: "pubsub", URI: uri("svc-orders")},
				{Function: "Tick", Name: "svc-tick", Env: with(map[string]string{"FUNCTION_TARGET": "Tick"}),
					Timeout: time.Minute, Concurrency: 4, Trigger: "schedule", URI: uri("svc-tick")},
			},
		},
		{
			name: "push subscription",
			got:  func() (any, error) { return d.PushSubscriptions() },
			want: []PushSubscription{{
				Name: "orders-svc-orders", Topic: "orders", Service: "svc-orders", AckDeadline: 45 * time.Second,
				MinBackoff: 5 * time.Second, MaxBackoff: 300 * time.Second, DeadLetterTopic: "orders-dlq", MaxDeliveries: 7,
				OIDCAudience: uri("svc-orders"), OIDCAccountEmail: "svc-orders-inv@run-1234.iam.gserviceaccount.com",
			}},
		},
		{
			name: "pull subscription",
			got:  func() (any, error) { return d.PullSubscriptions() },
			want: []PullSubscription{{Name: "orders-dlq-sub", Topic: "orders-dlq", AckDeadline: 30 * time.Second}},
		},
		{
			name: "topics",
			got:  func() (any, error) { return d.Topics() },
			want: []string{"orders", "orders-dlq"},
		},
		{
			name: "scheduler job",
			got:  func() (any, error) { return d.SchedulerJobs() },
			want: []SchedulerJob{{
				Name: "svc-tick-job", Schedule: "* * * * *", TimeZone: "Etc/UTC", Service: "svc-tick", Method: "POST",
				Headers: map[string]string{"Content-Type": "application/json"}, Body: []byte("{}"), AttemptDeadline: time.Minute,
			}},
		},
		{
			name: "storage trigger",
			got:  func() (any, error) { return d.StorageTriggers() },
			want: []StorageTrigger{{Name: "svc-ingest-finalized", EventType: "google.cloud.storage.object.v1.finalized", Bucket: "land-run-1234", Service: "svc-ingest"}},
		},
		{
			name: "firestore database",
			got:  func() (any, error) { return d.FirestoreDatabase() },
			want: "pipeline",
		},
		{
			name: "buckets",
			got:  func() (any, error) { return d.Buckets() },
			want: map[string]string{"landing": "land-run-1234", "staging": "stage"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.got()
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestEvaluatorReportsErrors(t *testing.T) {
	cfg, err := Load("testdata/module")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		vars map[string]cty.Value
	}{
		{"undeclared variable", map[string]cty.Value{"nope": cty.StringVal("x")}},
		{"value of the wrong type", map[string]cty.Value{"project_id": cty.ListValEmpty(cty.String)}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := NewEvaluator(cfg, tt.vars); err == nil {
				t.Error("got no error")
			}
		})
	}
	if _, err := Load("testdata/none"); err == nil {
		t.Error("Load of a folder without .tf files: got no error")
	}
}

// TestRepositoryDeployment reads the real terraform/: every service the
// image runs has its FUNCTION_TARGET, a trigger and its target, so the stack
// (test/stack) can start exactly what is deployed.
func TestRepositoryDeployment(t *testing.T) {
	d, err := Open(StringVars(map[string]string{"project_id": "alpipe-tfconfig"}))
	if err != nil {
		t.Fatal(err)
	}
	svcs, err := d.Services()
	if err != nil {
		t.Fatal(err)
	}
	byFn := map[string]Service{}
	for _, s := range svcs {
		byFn[s.Function] = s
		if s.Env["GOOGLE_CLOUD_PROJECT"] != "alpipe-tfconfig" {
			t.Errorf("%s: GOOGLE_CLOUD_PROJECT=%q, want the project_id variable", s.Function, s.Env["GOOGLE_CLOUD_PROJECT"])
		}
		if s.Trigger == "" {
			t.Errorf("%s (%s): nothing triggers it", s.Function, s.Name)
		}
	}
	for fn, trigger := range map[string]string{"IngestCSV": "storage", "AggregateOrders": "pubsub", "AdvanceWatermark": "schedule"} {
		if got := byFn[fn].Trigger; got != trigger {
			t.Errorf("%s: trigger %q, want %q", fn, got, trigger)
		}
	}
	subs, err := d.PushSubscriptions()
	if err != nil {
		t.Fatal(err)
	}
	if len(subs) != 1 || subs[0].Service != byFn["AggregateOrders"].Name || subs[0].DeadLetterTopic == "" {
		t.Errorf("push subscriptions %+v: want one to %s with a dead-letter topic", subs, byFn["AggregateOrders"].Name)
	}
	db, err := d.FirestoreDatabase()
	if err != nil {
		t.Fatal(err)
	}
	for fn, s := range byFn {
		if s.Env["FIRESTORE_DATABASE"] != db {
			t.Errorf("%s: FIRESTORE_DATABASE=%q, want the database Terraform creates, %q", fn, s.Env["FIRESTORE_DATABASE"], db)
		}
	}
	// The buckets are named after the project: the stack creates these
	// names, and the services must use them.
	buckets, err := d.Buckets()
	if err != nil {
		t.Fatal(err)
	}
	for _, role := range []string{"landing", "quarantine", "staging"} {
		if want := "alpipe-tfconfig-" + role; buckets[role] != want {
			t.Errorf("%s bucket %q, want %q", role, buckets[role], want)
		}
	}
	for fn, s := range byFn {
		for env, role := range map[string]string{"LANDING_BUCKET": "landing", "QUARANTINE_BUCKET": "quarantine", "STAGING_BUCKET": "staging"} {
			if v, ok := s.Env[env]; ok && v != buckets[role] {
				t.Errorf("%s: %s=%q, want the %s bucket Terraform creates, %q", fn, env, v, role, buckets[role])
			}
		}
	}
}
