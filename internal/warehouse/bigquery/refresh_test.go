package bigquery

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/warehouse"
)

// refreshSummary is what matters of a refresh job's configuration.
type refreshSummary struct {
	Destination       string
	WriteDisposition  string
	CreateDisposition string
	Params            []string
	DefaultDataset    string
	LegacySQL         bool
	SQL               string
}

func TestRefreshDaily(t *testing.T) {
	agg, err := warehouse.LookupAggregate(warehouse.VentasDiariasSKU)
	if err != nil {
		t.Fatal(err)
	}
	sql, err := agg.SelectSQL(warehouse.BigQuery, func(table string) string {
		return "`" + testProject + "." + testDataset + "." + table + "`"
	})
	if err != nil {
		t.Fatal(err)
	}
	summary := func(partition, date string) refreshSummary {
		return refreshSummary{
			Destination:       testProject + ":" + testDataset + ".ventas_diarias_sku$" + partition,
			WriteDisposition:  "WRITE_TRUNCATE",
			CreateDisposition: "CREATE_NEVER",
			Params:            []string{"fecha DATE " + date},
			DefaultDataset:    testProject + ":" + testDataset,
			SQL:               sql,
		}
	}

	tests := []struct {
		name      string
		setup     func(f *fakeBigQuery)
		dates     []string
		want      []refreshSummary
		wantCalls int // jobs.insert calls
		wantErr   string
	}{
		{
			name:      "one date overwrites its partition",
			dates:     []string{"2026-03-14"},
			want:      []refreshSummary{summary("20260314", "2026-03-14")},
			wantCalls: 1,
		},
		{
			name:      "dates sorted and deduplicated, one job each",
			dates:     []string{"2026-03-14", "2026-02-28", "2026-03-14"},
			want:      []refreshSummary{summary("20260228", "2026-02-28"), summary("20260314", "2026-03-14")},
			wantCalls: 2,
		},
		{
			name:      "running jobs are waited for",
			setup:     func(f *fakeBigQuery) { f.setRunningPolls(2) },
			dates:     []string{"2026-03-14"},
			want:      []refreshSummary{summary("20260314", "2026-03-14")},
			wantCalls: 1,
		},
		{
			name:      "503 on jobs.insert is retried",
			setup:     func(f *fakeBigQuery) { f.fault("jobs.insert", http.StatusServiceUnavailable, false) },
			dates:     []string{"2026-03-14"},
			want:      []refreshSummary{summary("20260314", "2026-03-14")},
			wantCalls: 2,
		},
		{
			name:      "503 after the job was created: the retry's 409 is waited for",
			setup:     func(f *fakeBigQuery) { f.fault("jobs.insert", http.StatusBadGateway, true) },
			dates:     []string{"2026-03-14"},
			want:      []refreshSummary{summary("20260314", "2026-03-14")},
			wantCalls: 2,
		},
		{
			name:  "no dates, no jobs",
			dates: nil,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newTestEnv(t)
			if tc.setup != nil {
				tc.setup(e.fake)
			}
			var days []int32
			for _, d := range tc.dates {
				days = append(days, day(t, d))
			}
			err := e.w.RefreshDaily(context.Background(), warehouse.VentasDiariasSKU, days)
			checkErr(t, err, tc.wantErr)
			calls := inserts(e.fake.callLog())
			if len(calls) != tc.wantCalls {
				t.Errorf("jobs.insert calls %v, want %d", calls, tc.wantCalls)
			}
			var got []refreshSummary
			for _, id := range e.fake.jobIDs() {
				got = append(got, summarize(t, e.fake, id))
				if state := e.fake.jobState(id); state != "DONE" {
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
	ids := e.fake.jobIDs()
	if len(ids) != 2 || ids[0] == ids[1] {
		t.Fatalf("job IDs %v, want two different ones", ids)
	}
	for _, id := range ids {
		rest, ok := strings.CutPrefix(id, "alpipe-refresh-ventas_diarias_sku-20260314-")
		if !ok || len(rest) != 16 || !validJobID(id) {
			t.Errorf("job ID %q: want alpipe-refresh-ventas_diarias_sku-20260314-<16 hex>", id)
		}
	}
}

func TestRefreshDailyErrors(t *testing.T) {
	tests := []struct {
		name      string
		aggregate string
		setup     func(f *fakeBigQuery)
		dates     []string
		wantErr   string
	}{
		{name: "unknown aggregate", aggregate: "ventas_mensuales", dates: []string{"2026-03-14"}, wantErr: `unknown aggregate "ventas_mensuales"`},
		{
			name:      "missing table under CREATE_NEVER fails the job, naming the date",
			aggregate: warehouse.VentasDiariasSKU,
			setup: func(f *fakeBigQuery) {
				f.mu.Lock()
				delete(f.tables, testDataset+"."+warehouse.VentasDiariasSKU)
				f.mu.Unlock()
			},
			dates:   []string{"2026-03-13", "2026-03-14"},
			wantErr: "2026-03-13: job alpipe-refresh-ventas_diarias_sku-20260313-",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newTestEnv(t)
			if tc.setup != nil {
				tc.setup(e.fake)
			}
			var days []int32
			for _, d := range tc.dates {
				days = append(days, day(t, d))
			}
			err := e.w.RefreshDaily(context.Background(), tc.aggregate, days)
			checkErr(t, err, tc.wantErr)
		})
	}
}

func summarize(t *testing.T, f *fakeBigQuery, id string) refreshSummary {
	t.Helper()
	cfg := f.jobConfig(id)
	if cfg == nil || cfg.Query == nil {
		t.Fatalf("job %s is not a query job", id)
	}
	q := cfg.Query
	s := refreshSummary{
		WriteDisposition:  q.WriteDisposition,
		CreateDisposition: q.CreateDisposition,
		LegacySQL:         q.UseLegacySql == nil || *q.UseLegacySql,
		SQL:               q.Query,
	}
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
