package replay

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/alpinashop/alpipe/internal/order"
	"github.com/alpinashop/alpipe/internal/render"
	"github.com/alpinashop/alpipe/internal/stream"
	"github.com/alpinashop/alpipe/internal/warehouse"
	"github.com/alpinashop/alpipe/internal/window"
)

// Warehouse appends panes and serves the named reads panes, line_dates and
// day_orders.
type Warehouse interface {
	stream.Sink
	warehouse.Reader
}

// Source yields the messages of a replay, in order, then io.EOF. An
// *InputError says the input itself is bad.
type Source interface {
	Next(ctx context.Context) (Message, error)
}

// Message is one order as the stream receives it.
type Message struct {
	Data       []byte
	Attributes map[string]string
	ID         string // in reports, and the stream's message ID
	// Invalid is why the source already knows the message is not an order
	// ("invalid: ..."): it is counted, not handled.
	Invalid string
	Cut     bool // see the package comment
}

// InputError is a problem of the replay's input (a malformed JSONL line),
// not of the store or warehouse.
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

// Options configure a replay.
type Options struct {
	Specs     []window.Spec // the live aggregations: the replay writes under their names
	IsCountry order.IsCountry
	Dates     Dates            // of the orders' event times; zero keeps all
	TempDir   string           // of the segments' state files; "": os.TempDir()
	Now       func() time.Time // read once at the start; required
	Log       *slog.Logger
}

// segmentWorkers is how many orders a segment handles at once. The state
// store fsyncs every commit and commits up to 256 waiting transactions
// together, so the pace is set by the orders in flight: BenchmarkReplayJSONL
// (deleted in 3ef125c) measured 650 orders/s with 1 worker, 1,560 with 16,
// 4,760 with 256 and 4,220 with 1,024.
const segmentWorkers = 256

// maxSamples bounds the invalid messages and conflicts listed in a Report.
const maxSamples = 20

// addSamples appends to samples as many of more as keep them within maxSamples.
func addSamples[T any](samples []T, more ...T) []T {
	room := max(maxSamples-len(samples), 0)
	return append(samples, more[:min(len(more), room)]...)
}

// Report says what a replay did.
type Report struct {
	Source   string    `json:"source"`
	Dates    string    `json:"dates,omitempty"`
	Started  time.Time `json:"started"`
	Read     int64     `json:"read"`
	Skipped  int64     `json:"skipped"` // outside Dates
	Accepted int64     `json:"accepted"`
	// Duplicates repeat a pedido_id already handled in their segment.
	Duplicates     int64    `json:"duplicates"`
	Invalid        int64    `json:"invalid"`
	InvalidSamples []Sample `json:"invalid_samples,omitempty"`
	Segments       int      `json:"segments"`
	// Windows (each closed with one ON_TIME pane) = Written + Unchanged +
	// Conflicts.
	Windows         int64      `json:"windows"`
	Written         int64      `json:"written"`
	Unchanged       int64      `json:"unchanged"`
	Conflicts       int64      `json:"conflicts"`
	ConflictSamples []Conflict `json:"conflict_samples,omitempty"`
	// NotReplayed are the aggregations whose key the source does not keep
	// (the table source has no SKU).
	NotReplayed []string `json:"not_replayed,omitempty"`
	// Watermark and EmittedAt are those of the last segment's final tick.
	Watermark time.Time `json:"watermark,omitzero"`
	EmittedAt time.Time `json:"emitted_at,omitzero"`
}

func (r Report) OK() bool { return r.Conflicts == 0 }

type Sample struct {
	ID     string `json:"id"`
	Reason string `json:"reason"`
}

// Conflict is a window the replay refused to write.
type Conflict struct {
	Aggregation string          `json:"aggregation"`
	WindowStart time.Time       `json:"window_start"`
	Key         string          `json:"key"`
	Replay      window.Measures `json:"replay"`
	Existing    int             `json:"existing_panes"`
	Latest      string          `json:"latest"` // the newest existing pane: "EARLY #3 179.8/1/2"
}

// Run replays src into wh. On error the Report says what was done: closed
// segments' panes are written, and a re-run adds nothing to them.
func Run(ctx context.Context, wh Warehouse, src Source, name string, opts Options) (Report, error) {
	notReplayed := keepKeys(src, &opts)
	if err := checkOptions(wh, src, &opts); err != nil {
		return Report{}, err
	}
	start := opts.Now().UTC()
	r := &runner{wh: wh, src: src, opts: opts, start: start, guard: newGuard(wh, opts.Specs)}
	r.rep = Report{Source: name, Dates: opts.Dates.String(), Started: start, NotReplayed: notReplayed}
	err := r.run(ctx)
	r.rep.Written, r.rep.Unchanged, r.rep.Conflicts, r.rep.ConflictSamples = r.guard.counts()
	return r.rep, err
}

// keepKeys drops from opts the aggregations whose key src does not keep
// (the table source's summary line has no SKU: an aggregation keyed by it
// would be replayed wrong) and returns their names.
func keepKeys(src Source, opts *Options) []string {
	t, ok := src.(*Table)
	if !ok {
		return nil
	}
	var dropped []string
	opts.Specs = slices.DeleteFunc(slices.Clone(opts.Specs), func(s window.Spec) bool {
		drop := !t.Keeps(s.KeyField)
		if drop {
			dropped = append(dropped, s.Name)
		}
		return drop
	})
	return dropped
}

func checkOptions(wh Warehouse, src Source, opts *Options) error {
	var errs []error
	if wh == nil {
		errs = append(errs, errors.New("no warehouse"))
	}
	if src == nil {
		errs = append(errs, errors.New("no source"))
	}
	if opts.Now == nil {
		errs = append(errs, errors.New("no clock"))
	}
	if len(opts.Specs) == 0 {
		errs = append(errs, errors.New("no aggregation configured"))
	}
	for _, s := range opts.Specs {
		if err := s.Validate(); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("replay: %w", err)
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	return nil
}

type runner struct {
	wh    Warehouse
	src   Source
	opts  Options
	start time.Time
	guard *guard
	rep   Report
	seg   *segment
	// floor is the newest event time of the closed segments: no later
	// message may fall in one of its windows, or a window would get a
	// second pane 0.
	floor time.Time
}

func (r *runner) run(ctx context.Context) (err error) {
	defer func() {
		if r.seg != nil {
			err = errors.Join(err, r.seg.abort())
		}
	}()
	cut := false
	for {
		m, err := r.src.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("replay: read %s: %w", r.rep.Source, err)
		}
		r.rep.Read++
		cut = cut || m.Cut // a cut holds until the next message fed
		if m.Invalid != "" {
			r.invalid(m.ID, m.Invalid)
			continue
		}
		o, err := order.Parse(m.Data, m.Attributes, r.opts.IsCountry)
		if err != nil {
			r.invalid(m.ID, reasonOf(err))
			continue
		}
		if !r.opts.Dates.Contains(o.EventTime) {
			r.rep.Skipped++
			continue
		}
		if err := r.checkFloor(m.ID, o.EventTime); err != nil {
			return err
		}
		if cut && r.seg != nil && r.seg.closable(o.EventTime) {
			if err := r.closeSegment(ctx); err != nil {
				return err
			}
		}
		if r.seg == nil {
			if r.seg, err = r.openSegment(ctx); err != nil {
				return err
			}
		}
		cut = false
		if err := r.seg.feed(ctx, m, o); err != nil {
			return err
		}
	}
	if r.seg != nil {
		return r.closeSegment(ctx)
	}
	return nil
}

func (r *runner) checkFloor(id string, t time.Time) error {
	if r.floor.IsZero() {
		return nil
	}
	for _, s := range r.opts.Specs {
		if !s.WindowOf(t).Start.After(s.WindowOf(r.floor).Start) {
			return fmt.Errorf("replay: %s: event time %s falls in a window of a closed segment (the source marked a cut it did not keep)",
				id, t.Format(time.RFC3339))
		}
	}
	return nil
}

func (r *runner) openSegment(ctx context.Context) (*segment, error) {
	r.rep.Segments++
	return openSegment(ctx, r.guard, r.opts, r.handleTime())
}

func (r *runner) closeSegment(ctx context.Context) error {
	s := r.seg
	r.seg = nil
	res, err := s.close(ctx, r.start)
	r.rep.Accepted += res.accepted
	r.rep.Duplicates += res.duplicates
	r.rep.Invalid += res.invalidCount
	r.rep.InvalidSamples = addSamples(r.rep.InvalidSamples, res.invalid...)
	r.rep.Windows += res.windows
	if !res.maxEvent.IsZero() && res.maxEvent.After(r.floor) {
		r.floor = res.maxEvent
	}
	if !res.watermark.IsZero() {
		r.rep.Watermark, r.rep.EmittedAt = res.watermark, res.emittedAt
	}
	return err
}

// handleTime is one largest idle timeout before the start, so that a final
// tick at the start finds every source idle and moves W to start - D.
func (r *runner) handleTime() time.Time {
	var idle time.Duration
	for _, s := range r.opts.Specs {
		idle = max(idle, s.IdleTimeout)
	}
	return r.start.Add(-idle)
}

func (r *runner) invalid(id, reason string) {
	r.rep.Invalid++
	r.rep.InvalidSamples = addSamples(r.rep.InvalidSamples, Sample{ID: id, Reason: reason})
}

func reasonOf(err error) string {
	var inv *order.Invalid
	if errors.As(err, &inv) {
		return inv.Reason()
	}
	return "invalid: " + err.Error()
}

func (r Report) WriteText(w io.Writer) error {
	dates := cmp.Or(r.Dates, "all dates")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "replay of %s (%s)\n", r.Source, dates)
	fmt.Fprintf(tw, "read\t%d\n", r.Read)
	fmt.Fprintf(tw, "accepted\t%d\n", r.Accepted)
	fmt.Fprintf(tw, "duplicates\t%d\n", r.Duplicates)
	fmt.Fprintf(tw, "invalid\t%d\n", r.Invalid)
	fmt.Fprintf(tw, "outside the dates\t%d\n", r.Skipped)
	fmt.Fprintf(tw, "segments\t%d\n", r.Segments)
	fmt.Fprintf(tw, "windows closed\t%d (one ON_TIME pane each)\n", r.Windows)
	fmt.Fprintf(tw, "panes written\t%d\n", r.Written)
	fmt.Fprintf(tw, "already there\t%d (identical: a re-run adds nothing)\n", r.Unchanged)
	fmt.Fprintf(tw, "refused\t%d (the window has other panes)\n", r.Conflicts)
	if len(r.NotReplayed) > 0 {
		fmt.Fprintf(tw, "not replayed\t%s (the source does not keep their key)\n", strings.Join(r.NotReplayed, ", "))
	}
	if !r.EmittedAt.IsZero() {
		fmt.Fprintf(tw, "final tick\t%s, watermark %s\n", r.EmittedAt.Format(time.RFC3339), r.Watermark.Format(time.RFC3339))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(r.InvalidSamples) > 0 {
		fmt.Fprintf(w, "\ninvalid orders (first %d of %d):\n", len(r.InvalidSamples), r.Invalid)
		for _, s := range r.InvalidSamples {
			fmt.Fprintf(w, "  %s: %s\n", s.ID, s.Reason)
		}
	}
	if len(r.ConflictSamples) > 0 {
		fmt.Fprintf(w, "\nrefused windows (first %d of %d):\n", len(r.ConflictSamples), r.Conflicts)
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  AGGREGATION\tWINDOW_START\tKEY\tREPLAY\tEXISTING PANES\tLATEST")
		for _, c := range r.ConflictSamples {
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s/%d/%d\t%d\t%s\n", c.Aggregation, c.WindowStart.Format(time.RFC3339), c.Key,
				render.Money(c.Replay.Importe), c.Replay.Pedidos, c.Replay.Unidades, c.Existing, c.Latest)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintln(w)
	return err
}
