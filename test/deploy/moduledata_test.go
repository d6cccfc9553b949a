package deploy

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/aggregation"
	"github.com/alpinashop/alpipe/internal/contract"
	"github.com/alpinashop/alpipe/internal/ingest"
	"github.com/alpinashop/alpipe/internal/ledger"
	"github.com/alpinashop/alpipe/internal/stream"
	"github.com/alpinashop/alpipe/internal/warehouse"
)

// TestModuleDataMatchesTheCode holds what terraform/module.json says the
// module plans equal to what the Go code declares.
func TestModuleDataMatchesTheCode(t *testing.T) {
	d := readModuleData(t)
	reg, err := contract.Default()
	check(t, err)
	decls, err := aggregation.Default()
	check(t, err)
	type agg struct{ Name, Key, Accumulation string }
	var wantAggs, gotAggs []agg
	for _, decl := range decls {
		wantAggs = append(wantAggs, agg{decl.Name, decl.KeyField, string(decl.Accumulation)})
	}
	for _, name := range keysOf(d.Views) {
		gotAggs = append(gotAggs, agg{name, d.Views[name].Key, d.Views[name].Accumulation})
	}
	wantTables := map[string]moduleTable{}
	for _, tb := range warehouse.Tables() {
		wantTables[tb.Name] = moduleTable{Partition: tb.PartitionField, Clustering: tb.Clustering, Schema: tb.Schema}
	}
	tests := []struct {
		name      string
		want, got any
	}{
		// Each reject code gets a metric, so "how many rows were rejected,
		// and why" can be charted per reason; a contract change that adds a
		// rule must add its code to var.reject_codes.
		{"var.reject_codes (codes the ingest can log)", ingest.RejectCodes(reg), sorted(d.RejectCodes)},
		// Every document keeps its payload in the string field json, which
		// nothing queries: its single-field indexes are disabled in every
		// group of var.firestore_collection_groups (terraform test checks the
		// empty index_config and the groups), which must be exactly the
		// collection groups the adapters write (internal/docstore/firestore
		// asks for it): a group missing keeps its json indexed, a group that
		// nothing writes is a retired layout's. Likewise the TTL policies:
		// exactly the groups whose documents carry an ExpireAt. The packages'
		// own tests hold their lists equal to the paths their suites write.
		{"var.firestore_collection_groups (internal/ledger's and internal/stream's)",
			sorted(ledger.CollectionGroups(), stream.CollectionGroups()), sorted(d.FirestoreCollectionGroups)},
		{"var.firestore_ttl_collection_groups (internal/ledger's and internal/stream's)",
			sorted(ledger.TTLCollectionGroups(), stream.TTLCollectionGroups()), sorted(d.FirestoreTTLCollectionGroups)},
		// One source of truth: Terraform reads each fixed table's schema
		// from the very JSON file the Go code embeds (byte for byte:
		// terraform test), builds each panes table from the same template and
		// declarations as warehouse.PanesTable, and declares the layout
		// tables.go declares: every table of warehouse.Tables(), and no
		// other, with the same schema, partitioning and clustering.
		{"tables (warehouse.Tables())", wantTables, d.Tables},
		// Terraform reads the declarations the services embed: the same
		// aggregations, with the same keys and accumulation modes.
		{"aggregations (internal/aggregation)", wantAggs, gotAggs},
	}
	for _, tc := range tests {
		if diff := cmp.Diff(tc.want, tc.got); diff != "" {
			t.Errorf("%s against terraform/module.json (-go +terraform):\n%s", tc.name, diff)
		}
	}
	for _, c := range d.FirestoreTTLCollectionGroups {
		if !slices.Contains(d.FirestoreCollectionGroups, c) {
			t.Errorf("TTL group %s is not in var.firestore_collection_groups, so its json stays indexed", c)
		}
	}
}
