package main

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestValidateDecodesAsIngestCSV: validate reads a file as IngestCSV reads
// the object: gzip by its magic bytes whatever the name, a .gz name on
// plain text rejected, a binary file rejected, each with IngestCSV's reason.
func TestValidateDecodesAsIngestCSV(t *testing.T) {
	text, err := os.ReadFile(erpFile)
	if err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(text)
	zw.Close()
	tests := []struct {
		name    string
		content []byte
		object  string
		want    string // in the error
	}{
		// The export holds 3 bad rows of 4, found once decompressed.
		{name: "plain text", content: text, object: "exportaciones/2026/03/14/a.csv", want: "3 of 4 rows would be quarantined"},
		{name: "gzip under a .csv name", content: gz.Bytes(), object: "exportaciones/2026/03/14/a.csv", want: "3 of 4 rows would be quarantined"},
		{name: "gzip under a .csv.gz name", content: gz.Bytes(), object: "exportaciones/2026/03/14/a.csv.gz", want: "3 of 4 rows would be quarantined"},
		{name: "a .gz name on plain text", content: text, object: "exportaciones/2026/03/14/a.csv.gz", want: "named .gz but not gzip content"},
		{name: "a binary file", content: []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), object: "exportaciones/2026/03/14/a.csv", want: "binary content: NUL byte in the first 8000 bytes"},
		{name: "gzip cut short", content: gz.Bytes()[:gz.Len()/2], object: "exportaciones/2026/03/14/a.csv", want: "would be rejected whole: gzip:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "f")
			if err := os.WriteFile(file, tt.content, 0o600); err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			err := dispatch(t.Context(), []string{"validate", file, "--object", tt.object}, &out)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("validate: %v, want %q\n%s", err, tt.want, out.String())
			}
		})
	}
}
