package stack

import (
	"context"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/test/tfconfig"
)

// TestServicesStartWithTerraformEnvironment: every service Terraform
// deploys starts from the production binary with exactly the environment
// Terraform gives it, plus only what Cloud Run and the emulators add, and
// answers on its port.
func TestServicesStartWithTerraformEnvironment(t *testing.T) {
	s := need(t, Options{})
	services := s.Deployment.Services
	if len(services) == 0 {
		t.Fatal("Terraform deploys no service")
	}
	added := []string{"ALPIPE_CLOCK_FILE", "BIGQUERY_EMULATOR_HOST", "CLOUD_TASKS_EMULATOR_HOST", "FIRESTORE_EMULATOR_HOST", "K_CONFIGURATION", "K_REVISION", "K_SERVICE", "PORT", "STORAGE_EMULATOR_HOST"}
	for _, svc := range services {
		t.Run(svc.Function, func(t *testing.T) {
			p, ok := s.Processes[svc.Function]
			if !ok {
				t.Fatalf("no process for %s (%s)", svc.Function, svc.Name)
			}
			if !p.Running() {
				t.Fatalf("%s is not running; its output:\n%s", svc.Name, p.Output())
			}
			var want []string
			for k, v := range svc.Env {
				want = append(want, k+"="+v)
			}
			var got []string
			for _, kv := range p.Env() {
				k, _, _ := strings.Cut(kv, "=")
				if !slices.Contains(added, k) {
					got = append(got, kv)
				}
			}
			sort.Strings(want)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("environment besides the platform's and the emulators' (-terraform +process):\n%s", diff)
			}
			if !slices.Contains(p.Env(), "K_SERVICE="+svc.Name) {
				t.Errorf("environment %q lacks K_SERVICE=%s, the Cloud Run service name", p.Env(), svc.Name)
			}
			if svc.Env["FUNCTION_TARGET"] != svc.Function {
				t.Errorf("FUNCTION_TARGET=%q, want %q", svc.Env["FUNCTION_TARGET"], svc.Function)
			}
		})
	}
}

// TestBrokenEnvironmentFailsToStart: a service whose environment the
// binary refuses makes Start fail, naming the service and quoting the
// process's own words, which name the variable.
func TestBrokenEnvironmentFailsToStart(t *testing.T) {
	skipWithoutEmulators(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := Start(ctx, Options{Binary: binary, Start: storyStart, Adjust: func(d *tfconfig.Deployment) {
		for _, svc := range d.Services {
			if svc.Function == "IngestCSV" {
				delete(svc.Env, "STAGING_BUCKET")
			}
		}
	}})
	if err == nil {
		_ = s.Close()
		t.Fatal("IngestCSV without STAGING_BUCKET started; want a refusal at start")
	}
	for _, want := range []string{"alpipe-ingest", "IngestCSV", "STAGING_BUCKET"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not name %s:\n%v", want, err)
		}
	}
}
