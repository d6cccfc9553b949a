package deploy

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/zclconf/go-cty/cty"

	"github.com/alpinashop/alpipe/internal/ledger"
	"github.com/alpinashop/alpipe/internal/stream"
)

// Every document keeps its payload in the string field json, which nothing
// queries: its single-field indexes are disabled in every group of
// var.firestore_collection_groups (terraform test checks the empty
// index_config and the groups), which must be exactly the collection groups
// the adapters write (internal/docstore/firestore asks for it): a group
// missing keeps its json indexed, a group that nothing writes is a retired
// layout's. Likewise the TTL policies: exactly the groups whose documents
// carry an ExpireAt. The packages' own tests hold their lists equal to the
// paths their suites write.
func TestPayloadFieldIsNotIndexed(t *testing.T) {
	d := readModuleData(t)
	tests := []struct {
		name      string
		want, got []string
	}{
		{"var.firestore_collection_groups", sorted(ledger.CollectionGroups(), stream.CollectionGroups()), d.FirestoreCollectionGroups},
		{"var.firestore_ttl_collection_groups", sorted(ledger.TTLCollectionGroups(), stream.TTLCollectionGroups()), d.FirestoreTTLCollectionGroups},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, sorted(tc.got)); diff != "" {
				t.Errorf("%s against the groups internal/ledger and internal/stream write (-want +got):\n%s", tc.name, diff)
			}
		})
	}
	for _, c := range d.FirestoreTTLCollectionGroups {
		if !slices.Contains(d.FirestoreCollectionGroups, c) {
			t.Errorf("TTL group %s is not in var.firestore_collection_groups, so its json stays indexed", c)
		}
	}
}

// One google_firestore_field sets json, for every group. And the stream's
// tick lists a generation's dedup records with ListTag, an equality query
// on the field tag that only its automatic single-field index serves: no
// field resource may exempt it, in any collection group, or every fold
// fails with FAILED_PRECONDITION.
func TestFirestoreFields(t *testing.T) {
	m := parseModule(t)
	fields := map[string][]string{}
	for _, r := range m.blocksOf("resource", "google_firestore_field") {
		f := constant(r.Body.Attributes["field"].Expr)
		if !f.Type().Equals(cty.String) {
			t.Errorf("google_firestore_field.%s: field must be a literal, which this test can read", r.Labels[1])
			continue
		}
		fields[f.AsString()] = append(fields[f.AsString()], r.Labels[1])
	}
	if got := fields["json"]; len(got) != 1 {
		t.Errorf("google_firestore_field resources for json: %v, want one iterating over the collection groups", got)
	}
	if got := fields["tag"]; len(got) > 0 {
		t.Errorf("google_firestore_field %v configures the field tag: ListTag needs its automatic single-field index", got)
	}
}
