package stack

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/alpinashop/alpipe/test/tfconfig"
)

// GoldenPath is the embedded demo's expected output, relative to the
// repository: the stack and test/e2e must show the same, so they have no
// golden file of their own.
const GoldenPath = "internal/local/testdata/demo.golden"

// Golden is demo.golden, whole and cut into sections by title.
type Golden struct {
	Text     string
	sections map[string]string // title -> body, without the blank lines that end it
}

// ReadGolden reads demo.golden.
func ReadGolden(t testing.TB) Golden {
	t.Helper()
	root, err := tfconfig.RepoDir()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, GoldenPath))
	if err != nil {
		t.Fatalf("read the embedded demo's golden file: %v", err)
	}
	g := Golden{Text: string(b), sections: map[string]string{}}
	header := regexp.MustCompile(`^== (.+) ==$`)
	title := ""
	for _, line := range strings.SplitAfter(g.Text, "\n") {
		if m := header.FindStringSubmatch(strings.TrimSuffix(line, "\n")); m != nil {
			title = m[1]
			continue
		}
		g.sections[title] += line
	}
	for k, v := range g.sections {
		g.sections[k] = strings.TrimRight(v, "\n") + "\n"
	}
	return g
}

// Section is the body of the section whose title contains part.
func (g Golden) Section(t testing.TB, part string) string {
	t.Helper()
	for title, body := range g.sections {
		if strings.Contains(title, part) {
			return body
		}
	}
	t.Fatalf("%s has no section %q", GoldenPath, part)
	return ""
}

// Outline is the orders story reduced to what each step did: the order's
// fate ("17:05:00 order P-001001: accepted"), its fate in every other
// aggregation ("17:05:00 order P-001001 ventas_sku_hora_movil: accepted",
// from the line the demo prints under the order's) and each tick's summary
// line (naming its aggregation when several ran). Windows and panes are
// left to the final tables, which show them all.
func (g Golden) Outline(t testing.TB) []string {
	t.Helper()
	orderLine := regexp.MustCompile(`^(\S+) order (\S+)\s+event \S+: (.*?)(?: \(window .*)?$`)
	aggregationLine := regexp.MustCompile(`^ {9}([a-z0-9_]+): (\S+)`)
	tickLine := regexp.MustCompile(`^\S+ tick(?: \S+)?: `)
	var out []string
	order := "" // the order whose lines follow
	for _, line := range strings.Split(g.Section(t, "Orders in real time"), "\n") {
		if m := orderLine.FindStringSubmatch(line); m != nil {
			order = m[1] + " order " + m[2]
			out = append(out, order+": "+m[3])
		} else if m := aggregationLine.FindStringSubmatch(line); m != nil && order != "" {
			out = append(out, order+" "+m[1]+": "+m[2])
		} else if tickLine.MatchString(line) {
			order = ""
			out = append(out, line)
		}
	}
	if len(out) == 0 {
		t.Fatalf("%s has no orders story", GoldenPath)
	}
	return out
}

var generation = regexp.MustCompile(`(#|\.g|generation: )\d{6,}`)

// Mask hides generations, which come from the fake GCS's clock.
func Mask(s string) string { return generation.ReplaceAllString(s, "${1}GEN") }
