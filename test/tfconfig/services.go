package tfconfig

import (
	"fmt"
	"path/filepath"
	"sort"
	"time"
)

// ServicesFile, in the module's folder, is each Cloud Run service's name,
// request timeout, concurrency and whole container environment, as
// Terraform deploys them with DeployedVarsFile. Terraform's own test
// (terraform/tests) asserts that every planned service has exactly that
// name, timeout, concurrency and environment; the stack starts each process
// with that environment.
const ServicesFile = "services.json"

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
}

// Services reads the Cloud Run services of the repository's deployment
// (see Options).
func Services(o *Options) ([]Service, error) {
	d, err := Open(o)
	if err != nil {
		return nil, err
	}
	return d.Services, nil
}

// readServices decodes ServicesFile of the module in dir, sorted by function.
func readServices(dir string) ([]Service, error) {
	var data map[string]struct {
		Service     string            `json:"service"`
		Timeout     Duration          `json:"timeout"`
		Concurrency int               `json:"concurrency"`
		Env         map[string]string `json:"env"`
	}
	if err := decode(filepath.Join(dir, ServicesFile), &data); err != nil {
		return nil, err
	}
	out := make([]Service, 0, len(data))
	for fn, d := range data {
		if d.Env["FUNCTION_TARGET"] != fn {
			return nil, fmt.Errorf("%s: %s: FUNCTION_TARGET is %q, want the function's own name", ServicesFile, fn, d.Env["FUNCTION_TARGET"])
		}
		out = append(out, Service{Function: fn, Name: d.Service, Env: d.Env, Timeout: d.Timeout.Duration, Concurrency: d.Concurrency})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Function < out[j].Function })
	return out, nil
}
