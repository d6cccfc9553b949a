package layout

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// envReads are the calls that read the process environment.
var envReads = regexp.MustCompile(`\bos\.(Getenv|LookupEnv|Environ)\(`)

// envExempt may touch the environment outside package config, and why:
// the CLI re-executes itself with DuckDB's allocator setting, which DuckDB
// reads only at process start, passing the rest of the environment on.
// doctor inspects the machine as scripts/test.sh and tf-check.sh see it
// (CI, GOPROXY, TF_CHECK_BIN), which are not settings of alpipe's.
var envExempt = map[string]bool{
	"cmd/alpipe/main.go":   true,
	"cmd/alpipe/doctor.go": true,
}

// TestEnvironmentIsReadOnlyByConfig keeps every setting in one typed struct
// of internal/config: a stray os.Getenv is a setting nobody validates or
// documents.
func TestEnvironmentIsReadOnlyByConfig(t *testing.T) {
	var stray []string
	for _, root := range []string{"cmd", "functions", "internal"} {
		err := filepath.WalkDir(filepath.Join("..", "..", root), func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return nil
			}
			rel := filepath.ToSlash(strings.TrimPrefix(path, filepath.Join("..", "..")+string(filepath.Separator)))
			if strings.HasPrefix(rel, "internal/config/") || envExempt[rel] || isHelperPath(rel) {
				return nil
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			if envReads.Match(b) {
				stray = append(stray, rel)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	sort.Strings(stray)
	if diff := cmp.Diff([]string(nil), stray); diff != "" {
		t.Errorf("product files that read the environment outside internal/config (-want +got):\n%s", diff)
	}
}

// isHelperPath: test helpers (<port>test, bqfake) are not product code.
func isHelperPath(rel string) bool {
	for _, part := range strings.Split(filepath.Dir(rel), "/") {
		if strings.HasSuffix(part, "test") || part == "bqfake" {
			return true
		}
	}
	return false
}
