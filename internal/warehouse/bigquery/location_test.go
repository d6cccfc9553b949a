package bigquery

import "testing"

func TestResolveLocation(t *testing.T) {
	tests := []struct {
		name              string
		explicit, dataset string
		want              string
		wantErr           string
	}{
		{name: "the dataset's", dataset: "EU", want: "EU"},
		{name: "the explicit one, the dataset reporting none (an emulator)", explicit: "europe-west1", want: "europe-west1"},
		{name: "both, agreeing in another case", explicit: "eu", dataset: "EU", want: "eu"},
		{name: "both, disagreeing", explicit: "US", dataset: "EU", wantErr: "BIGQUERY_LOCATION is US, but the dataset is in EU"},
		{name: "neither", wantErr: "set BIGQUERY_LOCATION"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ResolveLocation(tc.explicit, tc.dataset)
			checkErr(t, err, tc.wantErr)
			if got != tc.want {
				t.Errorf("ResolveLocation(%q, %q) = %q, want %q", tc.explicit, tc.dataset, got, tc.want)
			}
		})
	}
}
