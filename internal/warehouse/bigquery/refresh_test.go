package bigquery

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/warehouse"
	"github.com/alpinashop/alpipe/internal/warehouse/bigquery/bqfake"
)

// refreshSummary is what matters of a refresh job's configuration.
type refreshSummary struct {
	Destination       string
	WriteDisposition  string
	CreateDisposition string
	Params            []string // none: dates are literals
	DefaultDataset    string
	LegacySQL         bool
	SQL               string
}

func TestRefreshDaily(t *testing.T) {
	agg, err := warehouse.LookupAggregate(warehouse.VentasDiariasSKU)
	if err != nil {
		t.Fatal(err)
	}
	qualify := func(table string) string { return "`" + testProject + "." + testDataset + "." + table + "`" }
	// Each date's refresh job, then the query listing the groups it left out.
	summary := func(partition, date string) []refreshSummary {
		sql, report, err := agg.DaySQL(warehouse.BigQuery, qualify, day(t, date))
		if err != nil {
			t.Fatal(err)
		}
		ds := testProject + ":" + testDataset
		return []refreshSummary{{Destination: ds + ".ventas_diarias_sku$" + partition, WriteDisposition: "WRITE_TRUNCATE",
			CreateDisposition: "CREATE_NEVER", DefaultDataset: ds, SQL: sql,
		}, {DefaultDataset: ds, SQL: report}}
	}

	d14 := summary("20260314", "2026-03-14")
	tests := []struct {
		name      string
		setup     func(f *bqfake.Fake)
		dates     []string
		want      []refreshSummary
		wantCalls int // jobs.insert calls
	}{
		{"one date overwrites its partition", nil, []string{"2026-03-14"}, d14, 2},
		{"dates sorted and deduplicated, two jobs each", nil, []string{"2026-03-14", "2026-02-28", "2026-03-14"},
			append(summary("20260228", "2026-02-28"), d14...), 4},
		{"running jobs are waited for", func(f *bqfake.Fake) { f.SetRunningPolls(2) }, []string{"2026-03-14"}, d14, 2},
		{"503 on jobs.insert is retried", func(f *bqfake.Fake) { f.Fault("jobs.insert", http.StatusServiceUnavailable, false) },
			[]string{"2026-03-14"}, d14, 3},
		{"503 after the job was created: the retry's 409 is waited for",
			func(f *bqfake.Fake) { f.Fault("jobs.insert", http.StatusBadGateway, true) }, []string{"2026-03-14"}, d14, 3},
		{"no dates, no jobs", nil, nil, nil, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newTestEnv(t)
			if tc.setup != nil {
				tc.setup(e.fake)
			}
			if err := e.w.RefreshDaily(context.Background(), warehouse.VentasDiariasSKU, days(t, tc.dates...)); err != nil {
				t.Fatal(err)
			}
			calls := inserts(e.fake.Calls())
			if len(calls) != tc.wantCalls {
				t.Errorf("jobs.insert calls %v, want %d", calls, tc.wantCalls)
			}
			var got []refreshSummary
			for _, id := range jobIDs(e.fake) {
				got = append(got, summarize(t, e.fake, id))
				if state := findJob(e.fake, id).State; state != "DONE" {
					t.Errorf("RefreshDaily returned while job %s is %s", id, state)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("refresh jobs (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRefreshDailyNewJobEachTime: a date refreshed again (a later file of
// the same day) must run a new query, never find the old job by its ID.
func TestRefreshDailyNewJobEachTime(t *testing.T) {
	e := newTestEnv(t)
	ctx := context.Background()
	d := day(t, "2026-03-14")
	for range 2 {
		if err := e.w.RefreshDaily(ctx, warehouse.VentasDiariasSKU, []int32{d}); err != nil {
			t.Fatal(err)
		}
	}
	ids := jobIDs(e.fake)
	if len(ids) != 4 || ids[0] == ids[2] {
		t.Fatalf("job IDs %v, want two refreshes with different IDs, each with its report", ids)
	}
	for i, id := range ids {
		if i%2 == 1 {
			if want := ids[i-1] + "-overflows"; id != want || !bqfake.ValidJobID(id) {
				t.Errorf("job ID %q: want %q", id, want)
			}
			continue
		}
		rest, ok := strings.CutPrefix(id, "alpipe-refresh-ventas_diarias_sku-20260314-")
		if !ok || len(rest) != 16 || !bqfake.ValidJobID(id) {
			t.Errorf("job ID %q: want alpipe-refresh-ventas_diarias_sku-20260314-<16 hex>", id)
		}
	}
}

// TestRefreshDailyErrors: an unknown aggregate or a date no DAY partition
// can hold is refused before any job, the date permanently while the other
// dates still run (two jobs each: the refresh and its overflow report); a
// job that fails is named by its date.
func TestRefreshDailyErrors(t *testing.T) {
	tests := []struct {
		name          string
		aggregate     string
		setup         func(f *bqfake.Fake)
		dates         []string
		wantErr       string
		wantPermanent bool
		wantJobs      int
	}{
		{name: "unknown aggregate", aggregate: "ventas_mensuales", dates: []string{"2026-03-14"}, wantErr: `unknown aggregate "ventas_mensuales"`},
		{name: "missing table under CREATE_NEVER fails the job, naming the date", dates: []string{"2026-03-13", "2026-03-14"},
			setup:   func(f *bqfake.Fake) { f.DropTable(warehouse.VentasDiariasSKU) },
			wantErr: "2026-03-13: job alpipe-refresh-ventas_diarias_sku-20260313-", wantJobs: 4},
		{name: "first and last partitions", dates: []string{"1960-01-01", "2159-12-31"}, wantJobs: 4},
		{name: "before 1960", dates: []string{"1959-12-31", "2026-03-14"},
			wantErr: "date 1959-12-31 is outside BigQuery's DAY partition range", wantPermanent: true, wantJobs: 2},
		{name: "after 2159", dates: []string{"2160-01-01"},
			wantErr: "date 2160-01-01 is outside", wantPermanent: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newTestEnv(t)
			if tc.setup != nil {
				tc.setup(e.fake)
			}
			if tc.aggregate == "" {
				tc.aggregate = warehouse.VentasDiariasSKU
			}
			err := e.w.RefreshDaily(context.Background(), tc.aggregate, days(t, tc.dates...))
			checkErr(t, err, tc.wantErr)
			if tc.wantPermanent && !warehouse.IsPermanent(err) {
				t.Errorf("error %v is not permanent", err)
			}
			if n := len(e.fake.Jobs()); n != tc.wantJobs {
				t.Errorf("%d jobs, want %d", n, tc.wantJobs)
			}
		})
	}
}

func summarize(t *testing.T, f *bqfake.Fake, id string) refreshSummary {
	t.Helper()
	cfg := findJob(f, id).Config
	if cfg == nil || cfg.Query == nil {
		t.Fatalf("job %s is not a query job", id)
	}
	q := cfg.Query
	s := refreshSummary{WriteDisposition: q.WriteDisposition, CreateDisposition: q.CreateDisposition,
		LegacySQL: q.UseLegacySql == nil || *q.UseLegacySql, SQL: q.Query}
	if d := q.DestinationTable; d != nil {
		s.Destination = d.ProjectId + ":" + d.DatasetId + "." + d.TableId
	}
	if d := q.DefaultDataset; d != nil {
		s.DefaultDataset = d.ProjectId + ":" + d.DatasetId
	}
	for _, p := range q.QueryParameters {
		s.Params = append(s.Params, p.Name+" "+p.ParameterType.Type+" "+p.ParameterValue.Value)
	}
	return s
}
