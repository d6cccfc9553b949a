package bigquery

import (
	"context"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/warehouse"
	"github.com/alpinashop/alpipe/internal/warehouse/bigquery/bqfake"
)

// refreshSummary is what matters of a refresh job's configuration.
type refreshSummary struct {
	JobID             string // the random token as R
	Destination       string
	WriteDisposition  string
	CreateDisposition string
	Params            []string // none: dates are literals
	DefaultDataset    string
	LegacySQL         bool
	SQL               string
}

// TestRefreshDaily: per date a refresh job, then the query listing the
// groups it left out, named after it. An unknown aggregate or a date no DAY
// partition can hold is refused before any job, the date permanently while
// the other dates still run; a job that fails is named by its date. A date
// refreshed again (a later file of the same day) runs a new job, never
// finds the old one by its ID.
func TestRefreshDaily(t *testing.T) {
	agg, err := warehouse.LookupAggregate(warehouse.VentasDiariasSKU)
	if err != nil {
		t.Fatal(err)
	}
	qualify := func(table string) string { return "`" + testProject + "." + testDataset + "." + table + "`" }
	summary := func(dates ...string) (out []refreshSummary) {
		for _, date := range dates {
			sql, report, err := agg.DaySQL(warehouse.BigQuery, qualify, day(t, date))
			if err != nil {
				t.Fatal(err)
			}
			ds, part := testProject+":"+testDataset, strings.ReplaceAll(date, "-", "")
			id := "alpipe-refresh-ventas_diarias_sku-" + part + "-R"
			out = append(out, refreshSummary{JobID: id, Destination: ds + ".ventas_diarias_sku$" + part,
				WriteDisposition: "WRITE_TRUNCATE", CreateDisposition: "CREATE_NEVER",
				DefaultDataset: ds, SQL: sql,
			}, refreshSummary{JobID: id + "-overflows", DefaultDataset: ds, SQL: report})
		}
		return out
	}
	d14 := [][]string{{"2026-03-14"}}
	tests := []struct {
		name          string
		aggregate     string // "" is ventas_diarias_sku
		setup         func(f *bqfake.Fake)
		calls         [][]string // the dates of successive RefreshDaily calls
		want          []refreshSummary
		wantCalls     int // jobs.insert calls
		wantErr       string
		wantPermanent bool
	}{
		{name: "one date overwrites its partition", calls: d14, want: summary("2026-03-14"),
			wantCalls: 2},
		{name: "dates sorted and deduplicated, two jobs each",
			calls: [][]string{{"2026-03-14", "2026-02-28", "2026-03-14"}},
			want:  summary("2026-02-28", "2026-03-14"), wantCalls: 4},
		{name: "a date refreshed again runs new jobs", calls: [][]string{{"2026-03-14"}, {"2026-03-14"}},
			want: summary("2026-03-14", "2026-03-14"), wantCalls: 4},
		{name: "running jobs are waited for", setup: func(f *bqfake.Fake) { f.SetRunningPolls(2) },
			calls: d14, want: summary("2026-03-14"), wantCalls: 2},
		{name: "503 on jobs.insert is retried",
			setup: func(f *bqfake.Fake) { f.Fault("jobs.insert", http.StatusServiceUnavailable, false) },
			calls: d14, want: summary("2026-03-14"), wantCalls: 3},
		{name: "503 after the job was created: the retry's 409 is waited for",
			setup: func(f *bqfake.Fake) { f.Fault("jobs.insert", http.StatusBadGateway, true) },
			calls: d14, want: summary("2026-03-14"), wantCalls: 3},
		{name: "no dates, no jobs", calls: [][]string{nil}},
		{name: "unknown aggregate", aggregate: "ventas_mensuales", calls: d14,
			wantErr: `unknown aggregate "ventas_mensuales"`},
		{name: "missing table under CREATE_NEVER fails the job, naming the date",
			setup: func(f *bqfake.Fake) { f.DropTable(warehouse.VentasDiariasSKU) },
			calls: [][]string{{"2026-03-13", "2026-03-14"}}, want: summary("2026-03-13", "2026-03-14"),
			wantErr: "2026-03-13: job alpipe-refresh-ventas_diarias_sku-20260313-", wantCalls: 4},
		{name: "first and last partitions", calls: [][]string{{"1960-01-01", "2159-12-31"}},
			want: summary("1960-01-01", "2159-12-31"), wantCalls: 4},
		{name: "before 1960", calls: [][]string{{"1959-12-31", "2026-03-14"}},
			want: summary("2026-03-14"), wantCalls: 2, wantPermanent: true,
			wantErr: "date 1959-12-31 is outside BigQuery's DAY partition range"},
		{name: "after 2159", calls: [][]string{{"2160-01-01"}},
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
			var err error
			for _, dates := range tc.calls {
				var days []int32
				for _, d := range dates {
					days = append(days, day(t, d))
				}
				err = e.w.RefreshDaily(context.Background(), tc.aggregate, days)
				checkErr(t, err, tc.wantErr)
			}
			if tc.wantPermanent && !warehouse.IsPermanent(err) {
				t.Errorf("error %v is not permanent", err)
			}
			if inserts := calls(e.fake, "jobs.insert"); len(inserts) != tc.wantCalls {
				t.Errorf("jobs.insert calls %v, want %d", inserts, tc.wantCalls)
			}
			var ids []string
			var got []refreshSummary
			for _, j := range e.fake.Jobs() {
				ids, got = append(ids, j.ID), append(got, summarize(t, j))
				if j.State != "DONE" {
					t.Errorf("RefreshDaily returned while job %s is %s", j.ID, j.State)
				}
				if !bqfake.ValidJobID(j.ID) {
					t.Errorf("job ID %q is not valid for BigQuery", j.ID)
				}
			}
			for _, id := range ids {
				if refresh, ok := strings.CutSuffix(id, "-overflows"); ok && !slices.Contains(ids, refresh) {
					t.Errorf("job %s is named after no refresh job of %v", id, ids)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("refresh jobs (-want +got):\n%s", diff)
			}
			slices.Sort(ids)
			if len(slices.Compact(ids)) != len(got) {
				t.Errorf("job IDs %v, want every one new", ids)
			}
		})
	}
}

var jobToken = regexp.MustCompile(`-[0-9a-f]{16}(-overflows)?$`)

func summarize(t *testing.T, j bqfake.Job) refreshSummary {
	t.Helper()
	if j.Config == nil || j.Config.Query == nil {
		t.Fatalf("job %s is not a query job", j.ID)
	}
	q := j.Config.Query
	s := refreshSummary{JobID: jobToken.ReplaceAllString(j.ID, "-R$1"), SQL: q.Query,
		WriteDisposition: q.WriteDisposition, CreateDisposition: q.CreateDisposition,
		LegacySQL: q.UseLegacySql == nil || *q.UseLegacySql}
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
