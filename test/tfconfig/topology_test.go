package tfconfig

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestOpenRenamesIntoTheProject reads the repository's topology.json and
// services.json as the stack does: with a project of its own, every name
// derived from the planned project is the stack's, and nothing else changes.
func TestOpenRenamesIntoTheProject(t *testing.T) {
	planned, errPlanned := Open("")
	d, err := Open("alpipe-stack-0a1b")
	if err := errors.Join(errPlanned, err); err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal([]any{d, d.Services})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), planned.Project) {
		t.Errorf("the planned project %s is left in %s", planned.Project, raw)
	}
	i := slices.IndexFunc(d.Services, func(s Service) bool { return s.Function == "IngestCSV" })
	if i < 0 {
		t.Fatal("no IngestCSV service")
	}
	ingest := d.Services[i].Env
	tests := []struct {
		name string
		got  any
		want any
	}{
		{name: "project", got: d.Project, want: "alpipe-stack-0a1b"},
		{name: "buckets, named after the project", got: d.Buckets, want: map[string]string{
			"build": "alpipe-stack-0a1b-build", "landing": "alpipe-stack-0a1b-landing",
			"quarantine": "alpipe-stack-0a1b-quarantine", "staging": "alpipe-stack-0a1b-staging",
		}},
		{name: "the storage trigger's bucket", got: d.StorageTriggers[0].Bucket, want: "alpipe-stack-0a1b-landing"},
		{name: "a service's buckets and project", got: []string{ingest["LANDING_BUCKET"], ingest["GOOGLE_CLOUD_PROJECT"]},
			want: []string{"alpipe-stack-0a1b-landing", "alpipe-stack-0a1b"}},
		{name: "the push subscription's account", got: d.PushSubscriptions[0].ServiceAccountEmail, want: "alpipe-orders-push@alpipe-stack-0a1b.iam.gserviceaccount.com"},
		{name: "what is not named after the project", got: []any{d.Region, d.Dataset, d.FirestoreDatabase, d.Topics, d.PushSubscriptions[0].Name, d.PushSubscriptions[0].MinimumBackoff.Duration, d.SchedulerJobs[0].AttemptDeadline.Duration},
			want: []any{"europe-west1", "alpinashop_analitica", "alpipe", []string{"pedidos-nuevos", "pedidos-nuevos-dlq"}, "pedidos-nuevos-alpipe-orders", 10 * time.Second, time.Minute}},
		{name: "as planned without a project", got: planned.Buckets["landing"], want: "alpipe-dev-example-landing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, tt.got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// Data the stack cannot trust is refused, naming what is wrong, rather
// than starting processes on a half-read deployment.
func TestOpenRefusesBrokenData(t *testing.T) {
	const (
		services = `{"A": {"service": "a", "timeout": "60s", "concurrency": 1, "env": {"FUNCTION_TARGET": "A"}}}`
		topology = `{"project": "p-1", "push_subscriptions": [{"function": "A", "minimum_backoff": "10s"}]}`
	)
	tests := []struct {
		name               string
		services, topology string
		want               string // in the error
	}{
		{name: "function target of another function", services: `{"A": {"service": "a", "timeout": "60s", "concurrency": 1, "env": {"FUNCTION_TARGET": "B"}}}`, topology: topology, want: "FUNCTION_TARGET"},
		{name: "timeout not a duration", services: `{"A": {"service": "a", "timeout": "soon", "concurrency": 1, "env": {"FUNCTION_TARGET": "A"}}}`, topology: topology, want: "soon"},
		{name: "unknown service field", services: `{"A": {"service": "a", "timeout": "60s", "concurrency": 1, "memory": "1Gi", "env": {"FUNCTION_TARGET": "A"}}}`, topology: topology, want: "memory"},
		{name: "services not JSON", services: `{"A": `, topology: topology, want: ServicesFile},
		{name: "unknown topology field", services: services, topology: `{"project": "p-1", "topic": "x"}`, want: "topic"},
		{name: "backoff not a duration", services: services, topology: `{"project": "p-1", "push_subscriptions": [{"minimum_backoff": 10}]}`, want: TopologyFile},
		{name: "a function without a service", services: services, topology: `{"project": "p-1", "scheduler_jobs": [{"function": "B", "name": "b-tick"}]}`, want: "b-tick"},
		{name: "no project", services: services, topology: `{}`, want: "project"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, data := range map[string]string{ServicesFile: tt.services, TopologyFile: tt.topology} {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			_, err := open(dir, "")
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one naming %q", err, tt.want)
			}
		})
	}
	if _, err := open(t.TempDir(), ""); err == nil {
		t.Error("no files: got no error")
	}
}
