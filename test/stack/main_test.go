package stack

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/big"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	"cloud.google.com/go/pubsub/v2"
	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/client"
	"github.com/alpinashop/alpipe/internal/order"
	"github.com/alpinashop/alpipe/internal/render"
	"github.com/alpinashop/alpipe/internal/stream"
)

// binary is cmd/server, built once per test run by TestMain.
var binary string

func TestMain(m *testing.M) {
	flag.Parse()
	code := func() int {
		if testing.Short() || len(MissingEmulators()) > 0 {
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
		if binary, err = BuildWith(ctx, dir, nil); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Fprintf(os.Stderr, "stack: built cmd/server (CGO_ENABLED=0) in %s\n", time.Since(start).Round(100*time.Millisecond))
		return m.Run()
	}()
	os.Exit(code)
}

// skipWithoutEmulators skips in -short mode or without the emulators.
func skipWithoutEmulators(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: the stack runs the production binary on the Firestore and Pub/Sub emulators")
	}
	if missing := MissingEmulators(); len(missing) > 0 {
		t.Skipf("%s not set: scripts/stack.sh (or scripts/test.sh) starts the emulators", strings.Join(missing, " and "))
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
	if opts.Binary == "" {
		opts.Binary = binary
	}
	if opts.Start.IsZero() {
		opts.Start = storyStart
	}
	ctx := testContext(t, time.Minute)
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
		return render.Scaled(ratText(x))
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

// --- helpers the scenarios share -------------------------------------------

// orderTime is the event time of the scenarios' orders: 17:02 UTC, in the
// ES window of 17:00-18:00.
const orderTime = "2026-03-14T18:02:00+01:00"

// read is a file of testdata.
func read(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(testdata + "/" + name)
	check(t, err)
	return b
}

// storySteps is the orders story of testdata/pedidos/historia.jsonl.
func storySteps(t *testing.T) []client.Step {
	t.Helper()
	steps, err := client.ReadStepsFile(story)
	check(t, err)
	return steps
}

// upload writes a file to the landing bucket and returns its generation.
func upload(ctx context.Context, t *testing.T, s *Stack, name string, data []byte) int64 {
	t.Helper()
	gen, err := s.Upload(ctx, s.Buckets["landing"], name, data, "")
	check(t, err)
	return gen
}

func setClock(t *testing.T, s *Stack, at time.Time) {
	t.Helper()
	check(t, s.SetClock(at))
}

// ordersTopic is the topic of the push subscription to AggregateOrders.
func (s *Stack) ordersTopic() (string, error) {
	for _, sub := range s.Deployment.PushSubscriptions {
		if sub.Function == "AggregateOrders" {
			return s.TopicName(sub.Topic), nil
		}
	}
	return "", errors.New("no push subscription to AggregateOrders")
}

// publish publishes an order to the topic pushed to AggregateOrders, with
// its event time unless eventTime is empty, and returns its message ID.
func publish(ctx context.Context, t *testing.T, s *Stack, data []byte, eventTime string) string {
	t.Helper()
	topic, err := s.ordersTopic()
	check(t, err)
	pub := s.PubSub.Publisher(topic)
	defer pub.Stop()
	msg := &pubsub.Message{Data: data, Attributes: map[string]string{}}
	if eventTime != "" {
		msg.Attributes[order.EventTimeAttribute] = eventTime
	}
	id, err := pub.Publish(ctx, msg).Get(ctx)
	if err != nil {
		t.Fatalf("publish at %s: %v", s.Now().Format("15:04:05"), err)
	}
	return id
}

// acked waits until AggregateOrders' front end acknowledged message id, and
// returns that request.
func acked(ctx context.Context, t *testing.T, s *Stack, id string) Request {
	t.Helper()
	r, err := s.Frontends["AggregateOrders"].Wait(ctx, waitTimeout, func(r Request) bool {
		m, _ := Pushed(r.Body)
		return m == id && r.Acked()
	})
	if err != nil {
		t.Fatalf("message %s at %s: %v", id, s.Now().Format("15:04:05"), err)
	}
	return r
}

// fireTick fires Cloud Scheduler's AdvanceWatermark job, which must answer 2xx,
// and returns its answer.
func fireTick(ctx context.Context, t *testing.T, s *Stack) stream.TickResult {
	t.Helper()
	job, ok := s.Scheduler.JobFor("AdvanceWatermark")
	if !ok {
		t.Fatal("no scheduler job calls AdvanceWatermark")
	}
	c, err := s.Scheduler.Fire(ctx, job)
	var res stream.TickResult
	if err == nil {
		err = json.Unmarshal(c.Body, &res)
	}
	if err != nil {
		t.Fatalf("tick at %s: %v: %s", s.Now().Format("15:04:05"), err, c.Body)
	}
	return res
}

// publishAcked publishes stormOrder as order id of country pais and waits
// until AggregateOrders acknowledged it.
func publishAcked(ctx context.Context, t *testing.T, s *Stack, id, pais, eventTime string) {
	t.Helper()
	body := strings.NewReplacer(`"P-STORM"`, `"`+id+`"`, `"ES"`, `"`+pais+`"`).Replace(stormOrder)
	acked(ctx, t, s, publish(ctx, t, s, []byte(body), eventTime))
}

// rowLines prints each row of a table by format, with the cells of the
// columns given, sorted.
func rowLines(s *Stack, table, format string, columns ...string) []string {
	var out []string
	for _, r := range s.BigQuery.Rows(table) {
		args := make([]any, len(columns))
		for i, c := range columns {
			args[i] = cell(r[c])
		}
		out = append(out, fmt.Sprintf(format, args...))
	}
	sort.Strings(out)
	return out
}

// hhmm prints a watermark as the demo does.
func hhmm(t time.Time) string {
	if t.IsZero() {
		return "-inf"
	}
	return t.UTC().Format("15:04")
}

// testContext bounds a test's waits: it ends after d, or with the test.
func testContext(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), d)
	t.Cleanup(cancel)
	return ctx
}

// textCase is a text a function made and the one it should have made.
type textCase struct{ name, got, want string }

func checkTexts(t *testing.T, tests []textCase) {
	t.Helper()
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, tt.got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
}

// check fails the test on err.
func check(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
