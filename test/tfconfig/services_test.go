package tfconfig

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A services.json the stack cannot trust is refused, naming what is wrong,
// rather than starting processes with a half-read environment.
func TestReadServicesRefusesBrokenData(t *testing.T) {
	tests := []struct {
		name string
		data string
		want string // in the error
	}{
		{name: "function target of another function", data: `{"A": {"service": "a", "timeout": "60s", "concurrency": 1, "env": {"FUNCTION_TARGET": "B"}}}`, want: "FUNCTION_TARGET"},
		{name: "timeout not a duration", data: `{"A": {"service": "a", "timeout": "soon", "concurrency": 1, "env": {"FUNCTION_TARGET": "A"}}}`, want: "timeout"},
		{name: "unknown field", data: `{"A": {"service": "a", "timeout": "60s", "concurrency": 1, "memory": "1Gi", "env": {"FUNCTION_TARGET": "A"}}}`, want: "memory"},
		{name: "not JSON", data: `{"A": `, want: "decode"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, ServicesFile), []byte(tt.data), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := readServices(dir)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one naming %q", err, tt.want)
			}
		})
	}
	if _, err := readServices(t.TempDir()); err == nil {
		t.Error("no services.json: got no error")
	}
}
