package config

import "strings"

// CLI is what the alpipe commands take from the environment: the defaults of
// their flags and where publish delivers orders.
type CLI struct {
	// Server is the URL of a running `alpipe serve`; empty means the local
	// API's default address.
	Server string `env:"ALPIPE_SERVER"`
	// DataDir is the data folder serve and doctor use by default.
	DataDir string `env:"ALPIPE_DATA_DIR, default=.local"`
	// Project names the Pub/Sub emulator's topic for publish.
	Project string `env:"GOOGLE_CLOUD_PROJECT, default=alpinashop-datos"`
	// PubSubEmulator, when set, makes publish send to the emulator's topic
	// instead of AggregateOrders (the client library reads it too).
	PubSubEmulator string `env:"PUBSUB_EMULATOR_HOST"`
}

// Validate accepts every value: each is a default a flag may override.
func (CLI) Validate() error { return nil }

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
	for _, v := range []struct{ name, value, want string }{
		{"STATE_STORE", c.State, Firestore}, {"WAREHOUSE", c.Warehouse, BigQuery},
		{"GOOGLE_CLOUD_PROJECT", c.Project, ""}, {"BIGQUERY_DATASET", c.Dataset, ""}, {"BIGQUERY_LOCATION", c.Location, ""},
	} {
		switch {
		case v.want != "" && v.value != v.want:
			missing = append(missing, v.name+"="+v.want)
		case v.want == "" && v.value == "":
			missing = append(missing, v.name)
		}
	}
	return missing
}

// Validate refuses a Cloud with anything Missing.
func (c Cloud) Validate() error {
	if m := c.Missing(); len(m) > 0 {
		return joinProblems("the deployed backends", problems{"set " + strings.Join(m, ", ")})
	}
	return nil
}
