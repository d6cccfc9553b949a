package bigquery

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/bigquery"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/api/option"

	"github.com/alpinashop/alpipe/internal/warehouse"
)

// offlineClient is a client of a closed port: any request it sends fails.
func offlineClient(t *testing.T) *bigquery.Client {
	t.Helper()
	client, err := bigquery.NewClient(context.Background(), testProject, option.WithoutAuthentication(),
		option.WithEndpoint("http://127.0.0.1:1/bigquery/v2/"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Close() })
	return client
}

func TestNew(t *testing.T) {
	client := offlineClient(t)
	staging := &recordingStaging{}

	defaults := Options{Project: testProject, Dataset: testDataset, Location: "EU", StagingBucket: testBucket, JobPrefix: "alpipe", PollInterval: time.Second}
	tests := []struct {
		name    string
		client  *bigquery.Client
		staging Staging
		opt     func(o *Options)
		wantErr []string // each must appear
		want    Options  // the effective options, when valid
	}{
		{name: "defaults filled in", client: client, staging: staging, want: defaults},
		{name: "given prefix and interval kept", client: client, staging: staging,
			opt: func(o *Options) {
				o.JobPrefix, o.PollInterval, o.StagingPrefix = "alpipe_prod", 250*time.Millisecond, "cargas/"
			},
			want: Options{Project: testProject, Dataset: testDataset, Location: "EU", StagingBucket: testBucket, StagingPrefix: "cargas/",
				JobPrefix: "alpipe_prod", PollInterval: 250 * time.Millisecond}},
		{name: "nil client", staging: staging, wantErr: []string{"nil BigQuery client"}},
		{name: "nil staging for a staging bucket", client: client, wantErr: []string{`nil staging store for staging bucket "` + testBucket + `"`}},
		// The services that never load run without STAGING_BUCKET.
		{name: "no staging bucket and no staging store", client: client, opt: func(o *Options) { o.StagingBucket = "" },
			want: Options{Project: testProject, Dataset: testDataset, Location: "EU", JobPrefix: "alpipe", PollInterval: time.Second}},
		{name: "every missing setting is named at once", client: client, staging: staging, opt: func(o *Options) { *o = Options{} },
			wantErr: []string{"empty project", "empty dataset", "empty location"}},
		{name: "job prefix BigQuery would refuse", client: client, staging: staging, opt: func(o *Options) { o.JobPrefix = "alpipe.prod" },
			wantErr: []string{"job prefix: byte '.'"}},
		{name: "job prefix too long for 1,024-character job IDs", client: client, staging: staging,
			opt: func(o *Options) { o.JobPrefix = strings.Repeat("a", maxJobPrefixLen+1) }, wantErr: []string{"job prefix: 101 bytes"}},
		{name: "negative poll interval", client: client, staging: staging, opt: func(o *Options) { o.PollInterval = -time.Second },
			wantErr: []string{"negative poll interval"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			opt := Options{Project: testProject, Dataset: testDataset, Location: "EU", StagingBucket: testBucket}
			if tc.opt != nil {
				tc.opt(&opt)
			}
			w, err := New(tc.client, tc.staging, opt)
			for _, want := range tc.wantErr {
				checkErr(t, err, want)
			}
			if len(tc.wantErr) == 0 {
				checkErr(t, err, "")
				if diff := cmp.Diff(tc.want, w.opt); diff != "" {
					t.Errorf("options (-want +got):\n%s", diff)
				}
			}
		})
	}
}

// TestLoadWithoutStaging: an adapter built without a staging bucket serves
// everything but Load, and Load fails before any request (the client points
// at a closed port, so a request would fail differently) with an error that
// names the variable to set and is not permanent: the file is fine, the
// deployment is not.
func TestLoadWithoutStaging(t *testing.T) {
	w, err := New(offlineClient(t), nil, Options{Project: testProject, Dataset: testDataset, Location: "EU"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = w.Load(context.Background(), warehouse.Load{ID: "l1", Table: warehouse.LineasPedido, Rows: source(lineas(t, 1))})
	if !errors.Is(err, ErrNoStaging) {
		t.Fatalf("Load error = %v, want ErrNoStaging", err)
	}
	checkErr(t, err, "STAGING_BUCKET")
	if warehouse.IsPermanent(err) {
		t.Errorf("Load error %v is permanent; a missing setting must not quarantine the file", err)
	}
}
