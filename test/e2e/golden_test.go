package e2e

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// goldenPath is the embedded demo's expected output: this test expects the
// same from the real parts, so it has no golden file of its own.
const goldenPath = "../../internal/local/testdata/demo.golden"

// mask hides generations, which come from the fake GCS's clock (as the
// embedded demo's test does).
func mask(s string) string {
	return regexp.MustCompile(`(#|\.g|generation: )\d{6,}`).ReplaceAllString(s, "${1}GEN")
}

// golden is demo.golden cut into what this test compares.
type golden struct {
	text     string
	sections map[string]string // title -> body, without the blank line that ends it
}

func readGolden(t *testing.T) golden {
	t.Helper()
	b, err := os.ReadFile(goldenPath)
	if err != nil {
		t.Fatalf("read the embedded demo's golden file: %v", err)
	}
	g := golden{text: string(b), sections: map[string]string{}}
	header := regexp.MustCompile(`^== (.+) ==$`)
	title := ""
	for _, line := range strings.SplitAfter(g.text, "\n") {
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

// fileDrops is the output of local.Server.DemoFiles: everything before the
// orders story.
func (g golden) fileDrops(t *testing.T) string {
	t.Helper()
	i := strings.Index(g.text, "\n== Orders in real time")
	if i < 0 {
		t.Fatalf("%s has no orders section", goldenPath)
	}
	return g.text[:i]
}

// table is the body of the section that shows table name.
func (g golden) table(t *testing.T, name string) string {
	t.Helper()
	for title, body := range g.sections {
		if strings.Contains(title, "("+name+")") {
			return body
		}
	}
	t.Fatalf("%s has no section for table %s", goldenPath, name)
	return ""
}

// outline is the orders story reduced to what each step did: the order's
// fate ("17:05:00 order P-001001: accepted"), its fate in every other
// aggregation ("17:05:00 order P-001001 ventas_sku_hora_movil: accepted",
// from the line render.AggregationLine prints under the order's) and each
// tick's summary line (naming its aggregation when several ran). Windows
// and panes are left to the final tables, which show them all.
func (g golden) outline(t *testing.T) []string {
	t.Helper()
	orderLine := regexp.MustCompile(`^(\S+) order (\S+)\s+event \S+: (.*?)(?: \(window .*)?$`)
	aggregationLine := regexp.MustCompile(`^ {9}([a-z0-9_]+): (\S+)`)
	tickLine := regexp.MustCompile(`^\S+ tick(?: \S+)?: `)
	var out []string
	for title, body := range g.sections {
		if !strings.HasPrefix(title, "Orders in real time") {
			continue
		}
		order := "" // the order whose lines follow
		for _, line := range strings.Split(body, "\n") {
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
	}
	if len(out) == 0 {
		t.Fatalf("%s has no orders story", goldenPath)
	}
	return out
}
