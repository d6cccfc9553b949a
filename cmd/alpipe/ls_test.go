package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestLsTarget(t *testing.T) {
	tests := []struct {
		name           string
		args           []string
		bucket, prefix string
		wantErr        string
	}{
		{name: "default: the whole landing bucket", bucket: "alpinashop-catalogo"},
		{name: "prefix of the landing bucket", args: []string{"exportaciones/2026/"}, bucket: "alpinashop-catalogo", prefix: "exportaciones/2026/"},
		{name: "another bucket", args: []string{"gs://alpinashop-cuarentena/cuarentena/"}, bucket: "alpinashop-cuarentena", prefix: "cuarentena/"},
		{name: "a prefix with a newline is refused", args: []string{"exportaciones/\nx"}, wantErr: "control character"},
		{name: "a bucket named by a path is refused", args: []string{"gs://../x"}, wantErr: "bucket name"},
		{name: "no bucket", args: []string{"gs:///x"}, wantErr: "names no bucket"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, p, err := lsTarget(tt.args)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("lsTarget(%q) error = %v, want one containing %q", tt.args, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{tt.bucket, tt.prefix}, []string{b, p}); diff != "" {
				t.Errorf("target (-want +got):\n%s", diff)
			}
		})
	}
}
