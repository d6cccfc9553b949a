package tfconfig

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// ServicesFile, in terraform/, is each Cloud Run service's name, request
// timeout, concurrency and whole container environment, as Terraform
// deploys them with terraform/testdata/deployed.tfvars.
const ServicesFile = "services.json"

// Service is one Cloud Run service as Terraform deploys it.
type Service struct {
	Function string            // its FUNCTION_TARGET
	Name     string            // the Cloud Run service name (K_SERVICE)
	Env      map[string]string // every variable of its container
	Timeout  time.Duration     // the request timeout
}

// readServices decodes ServicesFile of the module in dir, sorted by function.
func readServices(dir string, rename *strings.Replacer) ([]Service, error) {
	var data map[string]struct {
		Service     string            `json:"service"`
		Timeout     Duration          `json:"timeout"`
		Concurrency int               `json:"concurrency"`
		Env         map[string]string `json:"env"`
	}
	if err := decode(filepath.Join(dir, ServicesFile), rename, &data); err != nil {
		return nil, err
	}
	out := make([]Service, 0, len(data))
	for fn, d := range data {
		if d.Env["FUNCTION_TARGET"] != fn {
			return nil, fmt.Errorf("%s: %s: FUNCTION_TARGET is %q, want the function's own name", ServicesFile, fn, d.Env["FUNCTION_TARGET"])
		}
		out = append(out, Service{Function: fn, Name: d.Service, Env: d.Env, Timeout: d.Timeout.Duration})
	}
	slices.SortFunc(out, func(a, b Service) int { return strings.Compare(a.Function, b.Function) })
	return out, nil
}
