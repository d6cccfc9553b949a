package deploy

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// promqlMetric matches the log-based metrics a PromQL query reads.
var promqlMetric = regexp.MustCompile(`logging_googleapis_com:user_([A-Za-z0-9_]+?)(_sum|_count|_bucket)?\{`)

// logMetrics returns the PromQL names (without the prefix) of every
// log-based metric, and whether each is a distribution.
func logMetrics(t *testing.T, ev *evaluator, cfg *tfConfig) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for _, r := range cfg.ofType("google_logging_metric") {
		inst := ev.ctx.Variables["google_logging_metric"].GetAttr(r.Name)
		names := []string{}
		if _, ok := r.Block.Body.Attributes["for_each"]; ok {
			for _, v := range inst.AsValueMap() {
				names = append(names, v.GetAttr("name").AsString())
			}
		} else {
			names = append(names, inst.GetAttr("name").AsString())
		}
		dist := false
		if a, ok := attr(r.Block, "metric_descriptor", "value_type"); ok {
			dist = ev.str(t, a.Expr, nil) == "DISTRIBUTION"
		}
		for _, n := range names {
			out[strings.ReplaceAll(n, "/", "_")] = dist
		}
	}
	if len(out) == 0 {
		t.Fatal("no log-based metrics")
	}
	return out
}

func checkQueryMetrics(t *testing.T, where, query string, metrics map[string]bool) {
	t.Helper()
	refs := promqlMetric.FindAllStringSubmatch(query, -1)
	for _, m := range refs {
		dist, ok := metrics[m[1]]
		switch {
		case !ok:
			t.Errorf("%s: query reads logging metric %q, which is not defined", where, m[1])
		case dist && m[2] == "":
			t.Errorf("%s: %s is a distribution: read it with _sum, _count or _bucket", where, m[1])
		case !dist && m[2] != "":
			t.Errorf("%s: %s is a counter: no %s suffix", where, m[1], m[2])
		}
	}
}

func TestDashboardIsValidAndReadsDefinedMetrics(t *testing.T) {
	cfg := loadTerraform(t)
	ev := deployed(t, cfg, nil).withConfigured(t, "google_logging_metric", "google_pubsub_subscription")
	metrics := logMetrics(t, ev, cfg)
	d := cfg.lookup(t, "google_monitoring_dashboard.alpipe")
	src := ev.str(t, d.Block.Body.Attributes["dashboard_json"].Expr, nil)

	var dash struct {
		DisplayName  string `json:"displayName"`
		MosaicLayout struct {
			Columns int `json:"columns"`
			Tiles   []struct {
				XPos, YPos, Width, Height int
				Widget                    struct {
					Title   string `json:"title"`
					XyChart struct {
						DataSets []struct {
							TimeSeriesQuery struct {
								PrometheusQuery string `json:"prometheusQuery"`
							} `json:"timeSeriesQuery"`
						} `json:"dataSets"`
					} `json:"xyChart"`
				} `json:"widget"`
			} `json:"tiles"`
		} `json:"mosaicLayout"`
	}
	if err := json.Unmarshal([]byte(src), &dash); err != nil {
		t.Fatalf("dashboard JSON: %v\n%s", err, src)
	}
	if dash.DisplayName == "" || len(dash.MosaicLayout.Tiles) == 0 {
		t.Fatal("dashboard has no name or no tiles")
	}
	used := map[string]bool{}
	for i, tile := range dash.MosaicLayout.Tiles {
		if tile.Widget.Title == "" {
			t.Errorf("tile %d has no title", i)
		}
		if tile.XPos+tile.Width > dash.MosaicLayout.Columns {
			t.Errorf("tile %q overflows the %d columns", tile.Widget.Title, dash.MosaicLayout.Columns)
		}
		if len(tile.Widget.XyChart.DataSets) == 0 {
			t.Errorf("tile %q has no data", tile.Widget.Title)
		}
		for _, ds := range tile.Widget.XyChart.DataSets {
			q := ds.TimeSeriesQuery.PrometheusQuery
			if q == "" {
				t.Errorf("tile %q: empty query", tile.Widget.Title)
			}
			checkQueryMetrics(t, tile.Widget.Title, q, metrics)
			for _, m := range promqlMetric.FindAllStringSubmatch(q, -1) {
				used[m[1]] = true
			}
		}
	}
	// Every log-based metric is charted somewhere.
	var unused []string
	for m := range metrics {
		if !used[m] {
			unused = append(unused, m)
		}
	}
	sort.Strings(unused)
	if len(unused) > 0 {
		t.Errorf("metrics on no dashboard tile: %v", unused)
	}
}

func TestAlertPolicies(t *testing.T) {
	cfg := loadTerraform(t)
	ev := deployed(t, cfg, nil).withConfigured(t, "google_logging_metric", "google_pubsub_subscription")
	metrics := logMetrics(t, ev, cfg)
	policies := cfg.ofType("google_monitoring_alert_policy")
	var names []string
	for _, p := range policies {
		names = append(names, p.Name)
		t.Run(p.Name, func(t *testing.T) {
			if traversal(p.Block.Body.Attributes["notification_channels"].Expr) != "var.alert_notification_channels" {
				t.Error("notification_channels must be var.alert_notification_channels")
			}
			if nested(p.Block, "documentation") == nil {
				t.Error("no documentation: the person paged needs to know what to do")
			}
			var conds []*hclsyntax.Block
			for _, b := range p.Block.Body.Blocks {
				if b.Type == "conditions" {
					conds = append(conds, b)
				}
			}
			if len(conds) == 0 {
				t.Fatal("no condition")
			}
			for _, cond := range conds {
				if q, ok := attr(cond, "condition_prometheus_query_language", "query"); ok {
					query := ev.str(t, q.Expr, nil)
					if !promqlMetric.MatchString(query) && !runMetric.MatchString(query) {
						t.Errorf("query reads neither a log-based metric nor a Cloud Run request metric: %s", query)
					}
					checkQueryMetrics(t, p.Name, query, metrics)
				}
				if f, ok := attr(cond, "condition_threshold", "filter"); ok {
					filter := ev.str(t, f.Expr, nil)
					if !strings.Contains(filter, `subscription_id = "pedidos-nuevos-dlq-sub"`) {
						t.Errorf("threshold filter does not watch the dead-letter subscription: %s", filter)
					}
				}
			}
		})
	}
	sort.Strings(names)
	if diff := cmp.Diff([]string{"dead_letter", "failing_cells", "ingest_failures", "refresh_overflow", "rejection_rate", "schema_drift", "sweeper_findings", "watermark_stalled"}, names); diff != "" {
		t.Errorf("alert policies (-want +got):\n%s", diff)
	}
}

// runMetric matches Cloud Run's built-in request metric in PromQL.
var runMetric = regexp.MustCompile(`run_googleapis_com:request_count\{`)

// Ingest failures page: files FAILED for good (a log-based count) and
// non-2xx answers of the ingest service beyond the threshold, busy answers
// (409, another attempt holds the file) excluded. The sweeper pages once when
// it finds a file, and when it stops reporting.
func TestFailureAndSweeperAlerts(t *testing.T) {
	cfg := loadTerraform(t)
	ev := deployed(t, cfg, nil).withConfigured(t, "google_logging_metric", "google_pubsub_subscription")
	queries := func(name string) []string {
		var out []string
		for _, b := range cfg.lookup(t, "google_monitoring_alert_policy."+name).Block.Body.Blocks {
			if q, ok := attr(b, "condition_prometheus_query_language", "query"); ok && b.Type == "conditions" {
				out = append(out, strings.Join(strings.Fields(ev.str(t, q.Expr, nil)), " "))
			}
		}
		return out
	}
	ingest := strings.Join(queries("ingest_failures"), "\n")
	for _, want := range []string{
		"logging_googleapis_com:user_alpipe_ingest_failed{",
		`run_googleapis_com:request_count{monitored_resource="cloud_run_revision", service_name="alpipe-ingest", response_code_class!="2xx", response_code!="409"}`,
		"> 2",
	} {
		if !strings.Contains(ingest, want) {
			t.Errorf("ingest_failures queries lack %q:\n%s", want, ingest)
		}
	}
	sweeper := strings.Join(queries("sweeper_findings"), "\n")
	for _, want := range []string{
		"increase(logging_googleapis_com:user_alpipe_sweep_found_sum{monitored_resource=\"cloud_run_revision\"}[30m])) > 0",
		"absent_over_time(logging_googleapis_com:user_alpipe_sweep_found_count{",
	} {
		if !strings.Contains(sweeper, want) {
			t.Errorf("sweeper_findings queries lack %q:\n%s", want, sweeper)
		}
	}

	// What the metrics count.
	metrics := ev.ctx.Variables["google_logging_metric"]
	failed := metrics.GetAttr("ingest_failed").GetAttr("filter").AsString()
	for _, want := range []string{`"alpipe-ingest" OR "alpipe-sweeper"`, "severity>=ERROR", `jsonPayload.reason=~"^permanent"`} {
		if !strings.Contains(failed, want) {
			t.Errorf("ingest_failed filter lacks %s: %s", want, failed)
		}
	}
	if src := readRepoFile(t, "internal/ingest/ingest.go"); !strings.Contains(src, `"permanent (not retried`) {
		t.Error(`internal/ingest no longer marks permanent failures with a reason starting "permanent": the ingest_failed metric counts nothing`)
	}
	found := metrics.GetAttr("sweep").GetAttr("sweep_found")
	if got := found.GetAttr("value_extractor").AsString(); got != "EXTRACT(jsonPayload.found)" {
		t.Errorf("sweep_found extracts %s, want jsonPayload.found", got)
	}
	// Files the sweeper ingests count like any other.
	rows := metrics.GetAttr("ingest_rows").GetAttr("ingest_rows_read").GetAttr("filter").AsString()
	if !strings.Contains(rows, `"alpipe-sweeper"`) {
		t.Errorf("row metrics ignore files the sweeper ingests: %s", rows)
	}
}

func readRepoFile(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot(t), rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The log-based metrics read the fields the services log; a renamed field
// would silently chart nothing.
func TestLogMetricsReadTheLogContract(t *testing.T) {
	cfg := loadTerraform(t)
	ev := newEvaluator(t, cfg, nil).withConfigured(t, "google_logging_metric")
	fields := regexp.MustCompile(`jsonPayload\.([a-z_]+)`)
	allowed := map[string]bool{
		"feed": true, "state": true, "rows_read": true, "rows_loaded": true, "rows_quarantined": true,
		"rejects": true, "reason": true, "aggregation": true, "watermark_lag_seconds": true,
		"message": true, "found": true, "ingested": true, "failed": true, "skipped": true,
		"column": true, "change": true, // the "schema drift" line of internal/ingest
		"failing_cell": true,                            // the "window failing" line of internal/stream's tick
		"aggregate":    true, "date": true, "sku": true, // the "refresh overflow" line of internal/ingest (with column)
	}
	seen := map[string]bool{}
	for _, typ := range cfg.ofType("google_logging_metric") {
		inst := ev.ctx.Variables["google_logging_metric"].GetAttr(typ.Name)
		vals := []map[string]string{}
		collect := func(v cty.Value) {
			m := map[string]string{"filter": v.GetAttr("filter").AsString()}
			if v.Type().HasAttribute("value_extractor") {
				m["value_extractor"] = v.GetAttr("value_extractor").AsString()
			}
			if v.Type().HasAttribute("label_extractors") {
				for k, e := range v.GetAttr("label_extractors").AsValueMap() {
					m["label "+k] = e.AsString()
				}
			}
			vals = append(vals, m)
		}
		if _, ok := typ.Block.Body.Attributes["for_each"]; ok {
			for _, v := range inst.AsValueMap() {
				collect(v)
			}
		} else {
			collect(inst)
		}
		for _, m := range vals {
			for where, s := range m {
				for _, f := range fields.FindAllStringSubmatch(s, -1) {
					seen[f[1]] = true
					if !allowed[f[1]] {
						t.Errorf("%s %s reads jsonPayload.%s, not a field of the log contract", typ.addr(), where, f[1])
					}
				}
			}
			if !strings.Contains(m["filter"], `resource.type="cloud_run_revision"`) || !strings.Contains(m["filter"], "resource.labels.service_name=") {
				t.Errorf("%s: filter must select one Cloud Run service's logs: %s", typ.addr(), m["filter"])
			}
		}
	}
	for f := range allowed {
		if !seen[f] {
			t.Errorf("no metric reads jsonPayload.%s", f)
		}
	}
}
