package stack

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/big"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/alpinashop/alpipe/internal/render"
)

// binary is cmd/server, built once per test run by TestMain.
var binary string

func TestMain(m *testing.M) {
	flag.Parse()
	code := func() int {
		if testing.Short() || !emulatorsSet() {
			return m.Run() // every test skips, saying why
		}
		dir, err := os.MkdirTemp("", "alpipe-stack-bin-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(dir)
		start := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		if binary, err = Build(ctx, dir); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Fprintf(os.Stderr, "stack: built cmd/server (CGO_ENABLED=0) in %s\n", time.Since(start).Round(100*time.Millisecond))
		return m.Run()
	}()
	os.Exit(code)
}

func emulatorsSet() bool {
	for _, v := range Emulators {
		if os.Getenv(v) == "" {
			return false
		}
	}
	return true
}

// skipWithoutEmulators skips in -short mode or without the emulators.
func skipWithoutEmulators(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: the stack runs the production binary on the Firestore and Pub/Sub emulators")
	}
	if !emulatorsSet() {
		t.Skipf("%s not set: scripts/stack.sh (or scripts/test.sh) starts the emulators", strings.Join(Emulators, " and "))
	}
}

// storyStart is where the test clock starts: before the first step of the
// orders story, as in the embedded demo.
var storyStart = time.Date(2026, 3, 14, 17, 0, 0, 0, time.UTC)

// need starts a stack of its own for the test (a project of its own on
// the shared emulators) and stops it at the end; a failing test shows
// every process's output.
func need(t *testing.T, opts Options) *Stack {
	t.Helper()
	skipWithoutEmulators(t)
	opts.Binary = binary
	if opts.Start.IsZero() {
		opts.Start = storyStart
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := Start(ctx, opts)
	if err != nil {
		t.Fatalf("start the stack: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("processes' output:\n%s", s.Output())
		}
		if err := s.Close(); err != nil {
			t.Errorf("stop the stack: %v", err)
		}
	})
	return s
}

// --- the embedded demo's golden file ---------------------------------------

// goldenPath is the embedded demo's expected output: the stack must show
// the same, so it has no golden file of its own.
const goldenPath = "../../internal/local/testdata/demo.golden"

// mask hides generations, which come from the fake GCS's clock.
func mask(s string) string {
	return regexp.MustCompile(`(#|\.g|generation: )\d{6,}`).ReplaceAllString(s, "${1}GEN")
}

// golden is demo.golden cut into sections by title.
type golden map[string]string

func readGolden(t *testing.T) golden {
	t.Helper()
	b, err := os.ReadFile(goldenPath)
	if err != nil {
		t.Fatalf("read the embedded demo's golden file: %v", err)
	}
	g := golden{}
	header := regexp.MustCompile(`^== (.+) ==$`)
	title := ""
	for _, line := range strings.SplitAfter(string(b), "\n") {
		if m := header.FindStringSubmatch(strings.TrimSuffix(line, "\n")); m != nil {
			title = m[1]
			continue
		}
		g[title] += line
	}
	for k, v := range g {
		g[k] = strings.TrimRight(v, "\n") + "\n"
	}
	return g
}

// section is the body of the section whose title contains part.
func (g golden) section(t *testing.T, part string) string {
	t.Helper()
	for title, body := range g {
		if strings.Contains(title, part) {
			return body
		}
	}
	t.Fatalf("%s has no section %q", goldenPath, part)
	return ""
}

// outline is the orders story reduced to what each step did: the order's
// fate ("17:05:00 order P-001001: accepted"), its fate in every other
// aggregation ("17:05:00 order P-001001 ventas_sku_hora_movil: accepted",
// from the line the demo prints under the order's) and each tick's summary
// line (naming its aggregation when several ran).
func (g golden) outline(t *testing.T) []string {
	t.Helper()
	orderLine := regexp.MustCompile(`^(\S+) order (\S+)\s+event \S+: (.*?)(?: \(window .*)?$`)
	aggregationLine := regexp.MustCompile(`^ {9}([a-z0-9_]+): (\S+)`)
	tickLine := regexp.MustCompile(`^\S+ tick(?: \S+)?: `)
	var out []string
	order := "" // the order whose lines follow
	for _, line := range strings.Split(g.section(t, "Orders in real time"), "\n") {
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
		t.Fatalf("%s has no orders story", goldenPath)
	}
	return out
}

// --- tables as the demo prints them ----------------------------------------

// table renders rows of the BigQuery fake as the demo prints query results
// (render's "text" table), with the columns given, sorted by
// the first sortBy columns.
func table(rows []map[string]any, columns []string, sortBy int) string {
	cells := make([][]string, 0, len(rows))
	for _, r := range rows {
		line := make([]string, len(columns))
		for i, c := range columns {
			line[i] = cell(r[c])
		}
		cells = append(cells, line)
	}
	sort.SliceStable(cells, func(i, j int) bool {
		for k := 0; k < sortBy; k++ {
			if a, b := cells[i][k], cells[j][k]; a != b {
				if x, errx := strconv.ParseInt(a, 10, 64); errx == nil {
					if y, erry := strconv.ParseInt(b, 10, 64); erry == nil {
						return x < y
					}
				}
				return a < b
			}
		}
		return false
	})
	var b bytes.Buffer
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(columns, "\t"))
	for _, r := range cells {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	_ = tw.Flush()
	return b.String()
}

// cell prints a value as the demo does: NULL, exact decimals with their
// scale (render.Scaled: 179.80), timestamps in RFC 3339 UTC.
func cell(v any) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case *big.Rat:
		s := x.FloatString(9)
		s = strings.TrimRight(s, "0")
		return render.Scaled(strings.TrimSuffix(s, "."))
	case string:
		for _, layout := range []string{time.RFC3339Nano, "2006-01-02 15:04:05.999999999Z07:00", "2006-01-02 15:04:05.999999999 MST", "2006-01-02 15:04:05.999999999"} {
			if ts, err := time.Parse(layout, x); err == nil {
				return ts.UTC().Format(time.RFC3339)
			}
		}
		return x
	default:
		return fmt.Sprint(x)
	}
}

// --- the orders story file ----------------------------------------------------

// step is one line of an orders story (testdata/pedidos/historia.jsonl):
// an order arriving at a processing time, or a tick.
type step struct {
	Arrival   time.Time
	EventTime string
	Order     json.RawMessage
	Tick      time.Time
	Note      string
}

// readSteps reads the story as the embedded demo does (local.ReadSteps,
// which this package does not import: it links DuckDB).
func readSteps(t *testing.T, path string) []step {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var steps []step
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 10<<20)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var fields struct {
			Tick          *time.Time      `json:"tick"`
			MomentoEvento string          `json:"momento_evento"`
			Llegada       time.Time       `json:"llegada"`
			Nota          string          `json:"nota"`
			Pedido        json.RawMessage `json:"pedido"`
		}
		if err := json.Unmarshal(line, &fields); err != nil {
			t.Fatalf("%s line %d: %v", path, n, err)
		}
		if fields.Tick != nil {
			steps = append(steps, step{Tick: *fields.Tick})
			continue
		}
		if fields.Pedido == nil {
			t.Fatalf("%s line %d: no pedido (this reader knows the story's form only)", path, n)
		}
		steps = append(steps, step{Arrival: fields.Llegada, EventTime: fields.MomentoEvento, Order: fields.Pedido, Note: fields.Nota})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return steps
}

// pushed reads the message ID and pedido_id of a wrapped push body.
func pushed(body []byte) (messageID, pedidoID string) {
	var env struct {
		Message struct {
			Data      []byte `json:"data"`
			MessageID string `json:"messageId"`
		} `json:"message"`
	}
	_ = json.Unmarshal(body, &env)
	var o struct {
		PedidoID string `json:"pedido_id"`
	}
	_ = json.Unmarshal(env.Message.Data, &o)
	return env.Message.MessageID, o.PedidoID
}

// hhmm prints a watermark as the demo does.
func hhmm(t time.Time) string {
	if t.IsZero() {
		return "-inf"
	}
	return t.UTC().Format("15:04")
}
