package deploy

import (
	"testing"

	"github.com/zclconf/go-cty/cty"
)

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
