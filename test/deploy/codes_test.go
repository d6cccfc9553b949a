package deploy

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/contract"
	"github.com/alpinashop/alpipe/internal/ingest"
)

// Each reject code gets a metric, so "how many rows were rejected, and why"
// can be charted per reason; a contract change that adds a rule must add
// its code to var.reject_codes.
func TestRejectCodeMetricsCoverTheContracts(t *testing.T) {
	reg, err := contract.Default()
	check(t, err)
	got := slices.Sorted(slices.Values(readModuleData(t).RejectCodes))
	if diff := cmp.Diff(ingest.RejectCodes(reg), got); diff != "" {
		t.Errorf("var.reject_codes default (-codes the ingest can log +terraform):\n%s", diff)
	}
}
