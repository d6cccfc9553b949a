package bigquery

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/warehouse/bigquery/bqfake"
)

func TestInsertID(t *testing.T) {
	long := strings.Repeat("p", 129)
	sum := sha256.Sum256([]byte(long))
	tests := []struct{ name, id, want string }{
		{"short ID sent as it is", "ventas_hora_pais-1773482400-ES-0", "ventas_hora_pais-1773482400-ES-0"},
		{"128 characters sent as they are", strings.Repeat("p", 128), strings.Repeat("p", 128)},
		{"129 characters hashed", long, "sha256-" + hex.EncodeToString(sum[:])},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := insertID(tc.id)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("insertID (-want +got):\n%s", diff)
			}
			if len(got) > bqfake.MaxInsertIDLen {
				t.Errorf("insertID of %d characters, BigQuery takes %d", len(got), bqfake.MaxInsertIDLen)
			}
		})
	}
	if insertID(long) == insertID(long+"x") {
		t.Error("two long IDs hash to the same insertId")
	}
}
