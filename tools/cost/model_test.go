package cost

import (
	"bytes"
	"errors"
	"math/big"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/numeric"
)

func TestCharge(t *testing.T) {
	for _, tc := range []struct {
		name  string
		price string
		per   int64
		qty   *big.Rat
		want  string
	}{
		{"reads per 100k", "0.03", 100_000, ri(51_080_752), "15.32422560"},
		{"rounds half up to the nano-dollar", "0.000024", 1, big.NewRat(1, 48), "0.0000005"},
		{"fraction of a unit", "40", 1, big.NewRat(3, 1024), "0.1171875"},
		{"nothing", "6.25", 1, new(big.Rat), "0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := charge(Price{Amount: usd(tc.price), Per: tc.per, Unit: "u"}, tc.qty)
			if err != nil {
				t.Fatal(err)
			}
			want, err := numeric.Parse(tc.want, false)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want.String(), got.String()); diff != "" {
				t.Errorf("charge (-want +got):\n%s", diff)
			}
		})
	}
	if _, err := charge(Price{Amount: usd("1"), Per: 0}, ri(1)); err == nil {
		t.Error("a price for zero units was accepted")
	}
	if got, err := charge(Price{Amount: usd("1000"), Per: 1}, ri(1<<40)); err != nil || got.String() != "1099511627776000" {
		t.Errorf("an amount past the old int64 range = %s, %v; want 1099511627776000", got, err)
	}
	if _, err := charge(Price{Amount: usd("1000000000000000000000"), Per: 1}, ri(1<<40)); !errors.Is(err, numeric.ErrOverflow) {
		t.Errorf("an amount beyond NUMERIC: %v, want ErrOverflow", err)
	}
}

func TestMoneyAndNum(t *testing.T) {
	for _, tc := range []struct {
		name string
		got  string
		want string
	}{
		{"zero", Money(numeric.Dec{}), "$0.00"},
		{"NUMERIC's largest", Money(numeric.Max()), "$100,000,000,000,000,000,000,000,000,000.00"},
		{"below a cent", Money(numeric.FromNanos(4_000_000)), "<$0.01"},
		{"half a cent rounds up", Money(usd("0.005")), "$0.01"},
		{"thousands", Money(usd("1234567.891")), "$1,234,567.89"},
		{"negative", Money(usd("-2.5")), "-$2.50"},
		{"integer", Num(ri(1_502_160), 0), "1,502,160"},
		{"decimals", Num(big.NewRat(1_040_30, 100), 2), "1,040.30"},
		{"small", Num(big.NewRat(1, 3), 3), "0.333"},
		{"price text", amountText(usd("0.1")), "0.10"},
		{"price text keeps digits", amountText(usd("0.0000025")), "0.0000025"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestCeilTo(t *testing.T) {
	step := seconds(100 * time.Millisecond)
	for _, tc := range []struct {
		name string
		x    *big.Rat
		want *big.Rat
	}{
		{"rounds up", big.NewRat(42, 1000), big.NewRat(1, 10)},
		{"exact stays", big.NewRat(3, 10), big.NewRat(3, 10)},
		{"just above", big.NewRat(3001, 10000), big.NewRat(4, 10)},
		{"zero", new(big.Rat), new(big.Rat)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ceilTo(tc.x, step); got.Cmp(tc.want) != 0 {
				t.Errorf("ceilTo(%s) = %s, want %s", tc.x, got, tc.want)
			}
		})
	}
}

// TestFirestoreFreeQuotaIsDaily: the free reads are taken off each day,
// so a month of 60,000 reads a day pays for 10,000 a day.
func TestFirestoreFreeQuotaIsDaily(t *testing.T) {
	for _, tc := range []struct {
		name        string
		readsPerDay int64
		want        string
	}{
		{"above the quota", 60_000, "0.09"}, // 10,000 x 30 x 0.03 / 100,000
		{"below the quota", 40_000, "0"},    // all free
		{"no reads", 0, "0"},                // nothing
		{"ten times", 500_000, "4.05"},      // 450,000 x 30 x 0.03 / 100,000
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := Inputs{Volume: DefaultVolume(), Prices: Published()}
			zero := FirestoreDay{Reads: new(big.Rat), Writes: new(big.Rat), Deletes: new(big.Rat), TTLDeletes: new(big.Rat)}
			s := zero
			s.Reads = ri(tc.readsPerDay)
			b := &builder{}
			b.firestore(in, s, zero, new(big.Rat))
			bill, err := b.bill()
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(usd(tc.want).String(), bill.Lines[0].Cost.String()); diff != "" {
				t.Errorf("reads after free quota (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPublishedPrices(t *testing.T) {
	p := Published()
	for name, pr := range map[string]Price{
		"FirestoreRead": p.FirestoreRead, "FirestoreWrite": p.FirestoreWrite, "FirestoreDelete": p.FirestoreDelete,
		"FirestoreStorage": p.FirestoreStorage, "CloudRunCPU": p.CloudRunCPU, "CloudRunMemory": p.CloudRunMemory,
		"CloudRunRequests": p.CloudRunRequests, "PubSubThroughput": p.PubSubThroughput, "SchedulerJob": p.SchedulerJob,
		"BigQueryStorage": p.BigQueryStorage, "BigQueryStreaming": p.BigQueryStreaming, "BigQueryQuery": p.BigQueryQuery,
		"StorageStandard": p.StorageStandard, "StorageClassA": p.StorageClassA, "StorageClassB": p.StorageClassB,
		"DataflowVCPU": p.DataflowVCPU, "DataflowMemory": p.DataflowMemory, "DataflowDisk": p.DataflowDisk,
		"DataflowStreamingEngine": p.DataflowStreamingEngine,
	} {
		switch {
		case pr.Amount.Sign() <= 0 || pr.Per <= 0:
			t.Errorf("%s: %s per %d is not a price", name, pr.Amount, pr.Per)
		case !strings.HasPrefix(pr.Source, "https://"):
			t.Errorf("%s: source %q is not a page", name, pr.Source)
		case !strings.HasPrefix(pr.Read, ReadOn):
			t.Errorf("%s: read %q, want the date it was read", name, pr.Read)
		case pr.Assumed && pr.Note == "":
			t.Errorf("%s is assumed without saying why", name)
		}
	}
}

// TestDataflowBaseline: the comparison is the job, 2 workers of
// one vCPU always on: about 1,440 vCPU-hours a month.
func TestDataflowBaseline(t *testing.T) {
	rep, err := Compute(DefaultInputs(readRecorded(t)))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Dataflow) != 2 {
		t.Fatalf("%d Dataflow alternatives, want 2", len(rep.Dataflow))
	}
	for _, a := range rep.Dataflow {
		var found bool
		for _, l := range a.Bill.Lines {
			if l.Item == "worker vCPU-hours" {
				found = true
				if l.Quantity.Cmp(ri(1_440)) != 0 {
					t.Errorf("%s: %s vCPU-hours, want 1,440", a.Name, l.Quantity)
				}
			}
		}
		if !found {
			t.Errorf("%s has no vCPU line", a.Name)
		}
		if a.Bill.Total.Cmp(rep.Bill.Total) <= 0 {
			t.Errorf("%s costs %s, not more than alpipe's %s: check the inputs", a.Name, Money(a.Bill.Total), Money(rep.Bill.Total))
		}
	}
}

func TestFillDoc(t *testing.T) {
	for _, tc := range []struct {
		name    string
		doc     string
		blocks  map[string]string
		want    string
		wantErr string
	}{
		{"fills", "a\n<!-- cost:x -->\nold\n<!-- /cost:x -->\nb\n", map[string]string{"x": "new\n"},
			"a\n<!-- cost:x -->\nnew\n<!-- /cost:x -->\nb\n", ""},
		{"block missing from the document", "a\n", map[string]string{"x": "new\n"}, "", "no block x"},
		{"block the model lacks", "<!-- cost:y -->\n<!-- /cost:y -->", map[string]string{}, "", "does not render"},
		{"closed under another name", "<!-- cost:x -->\n<!-- /cost:z -->", map[string]string{"x": ""}, "", "closed as z"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := FillDoc(tc.doc, tc.blocks)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestCostDocMatchesModel recomputes every figure of docs/cost.md from the
// model and recorded.json, and fails if the document says anything else.
// go test ./tools/cost/ -run TestCostDocMatchesModel -update rewrites
// the generated blocks (the prose around them is kept).
func TestCostDocMatchesModel(t *testing.T) {
	rec := readRecorded(t)
	if *update {
		rewriteDoc(t, rec)
	}
	blocks, err := Blocks(rec)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(docPath)
	if err != nil {
		t.Fatal(err)
	}
	want, err := FillDoc(string(doc), blocks)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, string(doc)); diff != "" {
		t.Errorf("docs/cost.md differs from the model (-model +document); run go test ./tools/cost/ -run TestCostDocMatchesModel -update:\n%s", diff)
	}
}

// TestEmbeddedRecorded: LoadRecorded serves the file the tests read.
func TestEmbeddedRecorded(t *testing.T) {
	if *update {
		t.Skip("recorded.json is being rewritten: the embedded copy is the previous build's")
	}
	b, err := os.ReadFile(RecordedFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, recordedJSON) {
		t.Fatal("the embedded recorded.json differs from the file")
	}
	if _, err := LoadRecorded(); err != nil {
		t.Fatal(err)
	}
}

// TestDashboardFollowsThePage: the model's dashboard is the page's own
// behaviour over BigQuery (dashboard.DefaultRefresh, dashboard.DefaultRange),
// and every refresh pays its discard summary, two tables of at least
// MinQueryBytes each, besides its view query.
func TestDashboardFollowsThePage(t *testing.T) {
	rec, err := LoadRecorded()
	if err != nil {
		t.Fatal(err)
	}
	type got struct {
		RefreshesPerDay string
		DaysScanned     int64
		Tables          []string
		SummaryGiB      string // a month
	}
	// Both tables of the summary are far below 10 MiB over two days at this
	// volume, so a refresh's summary is billed 20 MiB: 288 x 30 x 20 MiB
	// = 168.75 GiB a month per page.
	for _, tc := range []struct {
		name   string
		change func(*Inputs)
		want   got
	}{
		{"as the page does", func(*Inputs) {}, got{"288", 2, []string{"ventas_sku_hora_movil_paneles"}, "168.75"}},
		{"every 2 minutes", func(in *Inputs) { in.Assume.DashboardRefresh = 2 * time.Minute },
			got{"720", 2, []string{"ventas_sku_hora_movil_paneles"}, "421.88"}},
		{"a page per view", func(in *Inputs) { in.Assume.DashboardEachView = true },
			got{"288", 2, []string{"ventas_hora_pais_paneles", "ventas_sku_hora_movil_paneles"}, "337.50"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := DefaultInputs(rec)
			tc.change(&in)
			u := usage(in)
			g := got{Num(u.DashboardRefreshesPerDay, 0), in.Assume.DashboardDaysScanned, u.DashboardTables,
				Num(div(u.DashboardSummaryBytes, ri(gib)), 2)}
			if diff := cmp.Diff(tc.want, g); diff != "" {
				t.Errorf("dashboard (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDaysTouched(t *testing.T) {
	for _, tc := range []struct {
		name string
		rng  time.Duration
		want int64
	}{
		{"the page's last 24 hours", 24 * time.Hour, 2},
		{"an hour", time.Hour, 2},
		{"a day and a minute", 24*time.Hour + time.Minute, 3},
		{"two days", 48 * time.Hour, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, daysTouched(tc.rng)); diff != "" {
				t.Errorf("daysTouched(%v) (-want +got):\n%s", tc.rng, diff)
			}
		})
	}
}

func TestDurationText(t *testing.T) {
	for _, tc := range []struct {
		name string
		d    time.Duration
		want string
	}{
		{"hours", 24 * time.Hour, "24 hours"},
		{"one hour", time.Hour, "1 hour"},
		{"minutes", 5 * time.Minute, "5 minutes"},
		{"ninety minutes", 90 * time.Minute, "90 minutes"},
		{"seconds", 5 * time.Second, "5 seconds"},
		{"fraction", 1500 * time.Millisecond, "1.5s"},
		{"zero", 0, "0s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, DurationText(tc.d)); diff != "" {
				t.Errorf("DurationText(%v) (-want +got):\n%s", tc.d, diff)
			}
		})
	}
}
