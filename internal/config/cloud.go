package config

import "strings"

// Cloud is what the CLI's commands on production data (--cloud, gs://)
// need set before they connect: the deployed backends, named as the
// deployed functions have them (terraform output). It has no defaults on
// purpose: such a command must not fall back to a laptop's backends.
type Cloud struct {
	State     string `env:"STATE_STORE"`
	Warehouse string `env:"WAREHOUSE"`
	Project   string `env:"GOOGLE_CLOUD_PROJECT"`
	Dataset   string `env:"BIGQUERY_DATASET"`
	Location  string `env:"BIGQUERY_LOCATION"`
}

// Missing lists what is still to set, as NAME=value or NAME, in the order
// a person sets them.
func (c Cloud) Missing() []string {
	var missing []string
	if c.State != Firestore {
		missing = append(missing, "STATE_STORE="+Firestore)
	}
	if c.Warehouse != BigQuery {
		missing = append(missing, "WAREHOUSE="+BigQuery)
	}
	for _, v := range []struct{ name, value string }{
		{"GOOGLE_CLOUD_PROJECT", c.Project}, {"BIGQUERY_DATASET", c.Dataset}, {"BIGQUERY_LOCATION", c.Location},
	} {
		if v.value == "" {
			missing = append(missing, v.name)
		}
	}
	return missing
}

// Validate refuses a Cloud with anything Missing.
func (c Cloud) Validate() error {
	if m := c.Missing(); len(m) > 0 {
		return joinProblems("the deployed backends", []string{"set " + strings.Join(m, ", ")})
	}
	return nil
}
