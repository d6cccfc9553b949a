package config

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/sethvargo/go-envconfig"
)

// TestCloudMissing: a command on production data names every deployed
// backend setting still to make, and none once all are set.
func TestCloudMissing(t *testing.T) {
	deployed := map[string]string{
		"STATE_STORE": "firestore", "WAREHOUSE": "bigquery", "GOOGLE_CLOUD_PROJECT": "p",
		"BIGQUERY_DATASET": "d", "BIGQUERY_LOCATION": "europe-west1",
	}
	tests := []struct {
		name string
		env  map[string]string
		want []string
	}{
		{name: "deployed", env: deployed},
		{name: "nothing set", env: map[string]string{},
			want: []string{"STATE_STORE=firestore", "WAREHOUSE=bigquery", "GOOGLE_CLOUD_PROJECT", "BIGQUERY_DATASET", "BIGQUERY_LOCATION"}},
		{name: "the laptop's backends", env: map[string]string{"STATE_STORE": "embedded", "WAREHOUSE": "duckdb", "GOOGLE_CLOUD_PROJECT": "p", "BIGQUERY_DATASET": "d", "BIGQUERY_LOCATION": "l"},
			want: []string{"STATE_STORE=firestore", "WAREHOUSE=bigquery"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c Cloud
			err := Load(context.Background(), &c, envconfig.MapLookuper(tt.env))
			if diff := cmp.Diff(tt.want, c.Missing()); diff != "" {
				t.Errorf("missing (-want +got):\n%s", diff)
			}
			if (err == nil) != (len(tt.want) == 0) {
				t.Errorf("Load = %v; want an error exactly when something is missing", err)
			}
		})
	}
}
