package tfconfig

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/zclconf/go-cty/cty"
)

// ServicesFile, in the module's folder, is each Cloud Run service's name,
// request timeout, concurrency and whole container environment, as
// Terraform deploys them with testdata/deployed.tfvars. It is data both
// sides read as data: Terraform's own test (terraform/tests) asserts that
// every planned service has exactly that name, timeout, concurrency and
// environment, and the stack starts each process with that environment,
// without evaluating any Terraform.
const ServicesFile = "services.json"

// serviceData is one function's entry of ServicesFile.
type serviceData struct {
	Service     string            `json:"service"`
	Timeout     string            `json:"timeout"`
	Concurrency int               `json:"concurrency"`
	Env         map[string]string `json:"env"`
}

// Service is one Cloud Run service as Terraform deploys it.
type Service struct {
	// Function is its FUNCTION_TARGET.
	Function string
	// Name is the Cloud Run service name (K_SERVICE).
	Name string
	// Env is every environment variable of its container, FUNCTION_TARGET
	// included.
	Env map[string]string
	// Timeout is the request timeout.
	Timeout time.Duration
	// Concurrency is the maximum of concurrent requests per instance.
	Concurrency int
	// Trigger is what calls it: "storage" (Eventarc), "pubsub" (push
	// subscription), "schedule" (Cloud Scheduler), or "" when nothing does.
	Trigger string
	// URI is its placeholder URI (PlaceholderServiceURI): what the
	// subscriptions, triggers and jobs name as their target.
	URI string
}

// readServices decodes ServicesFile of the module in dir, sorted by function.
func readServices(dir string) ([]Service, error) {
	path := filepath.Join(dir, ServicesFile)
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read the services: %w", err)
	}
	defer f.Close()
	dec := json.NewDecoder(f)
	dec.DisallowUnknownFields()
	var data map[string]serviceData
	if err := dec.Decode(&data); err != nil {
		return nil, fmt.Errorf("decode %s: %w", path, err)
	}
	out := make([]Service, 0, len(data))
	for fn, d := range data {
		timeout, err := time.ParseDuration(d.Timeout)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: timeout: %w", path, fn, err)
		}
		if d.Env["FUNCTION_TARGET"] != fn {
			return nil, fmt.Errorf("%s: %s: FUNCTION_TARGET is %q, want the function's own name", path, fn, d.Env["FUNCTION_TARGET"])
		}
		out = append(out, Service{Function: fn, Name: d.Service, Env: maps.Clone(d.Env), Timeout: timeout, Concurrency: d.Concurrency})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Function < out[j].Function })
	return out, nil
}

// Services reads the Cloud Run services of the repository's configuration
// (see Open for vars).
func Services(vars map[string]cty.Value) ([]Service, error) {
	d, err := Open(vars)
	if err != nil {
		return nil, err
	}
	return d.Services()
}

// Services lists the deployed Cloud Run services, sorted by function: the
// data of ServicesFile, in this deployment's project (GOOGLE_CLOUD_PROJECT
// is the project_id variable, which the stack sets per stack) and with its
// buckets (named after the project unless a variable names them), with the
// trigger and placeholder URI the configuration gives each. Other variables
// that would change a service's environment are not reflected: the
// environment is the file's, which Terraform's test holds to the deployed
// one.
func (d *Deployment) Services() ([]Service, error) {
	out, err := readServices(d.ev.Cfg.Dir)
	if err != nil {
		return nil, err
	}
	triggers, err := d.triggers()
	if err != nil {
		return nil, err
	}
	renamed, err := d.renamedBuckets()
	if err != nil {
		return nil, err
	}
	for i := range out {
		s := &out[i]
		for k, v := range s.Env {
			if name, ok := renamed[v]; ok {
				s.Env[k] = name
			}
		}
		if _, ok := s.Env["GOOGLE_CLOUD_PROJECT"]; ok && d.project != "" {
			s.Env["GOOGLE_CLOUD_PROJECT"] = d.project
		}
		s.URI = PlaceholderServiceURI(s.Name, d.region)
		s.Trigger = triggers[s.Name]
	}
	return out, nil
}

// renamedBuckets maps the name each bucket has in ServicesFile (the
// deployment of DeployedVarsFile alone) to its name in this deployment,
// for the buckets whose names differ.
func (d *Deployment) renamedBuckets() (map[string]string, error) {
	// Bucket names depend on variables only: no resolve is needed.
	ev, err := Deployed(d.ev.Cfg, nil)
	if err != nil {
		return nil, err
	}
	file, err := (&Deployment{ev: ev}).Buckets()
	if err != nil {
		return nil, fmt.Errorf("buckets of %s: %w", DeployedVarsFile, err)
	}
	here, err := d.Buckets()
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for key, name := range file {
		if here[key] != name {
			out[name] = here[key]
		}
	}
	return out, nil
}
