package setup

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"reflect"
	"time"

	"github.com/alpinashop/alpipe/internal/config"
	"github.com/alpinashop/alpipe/internal/contract"
	"github.com/alpinashop/alpipe/internal/ingest"
	"github.com/alpinashop/alpipe/internal/ledger"
	"github.com/alpinashop/alpipe/internal/logging"
	"github.com/alpinashop/alpipe/internal/reingest"
	"github.com/alpinashop/alpipe/internal/stream"
	"github.com/alpinashop/alpipe/internal/sweep"
)

// Plan is what a process runs, from its functions' configurations. Two
// functions of one process share one set of clients and services, so a Plan
// refuses two that name other backends or configure a shared service
// otherwise, rather than open a second one.
type Plan struct {
	backends *config.Backends
	ingest   *config.Ingest // with the Cloud Storage adapter it reads
	stream   *streamPlan
	sweep    *config.Sweep
}

type streamPlan struct {
	window config.Window
	stream config.Stream
}

// Ingest plans the ingest service (and its ledger) of cfg.
func (p *Plan) Ingest(cfg config.Ingest) error {
	if err := p.use(cfg.Backends); err != nil {
		return err
	}
	return once(&p.ingest, cfg, "the ingest service")
}

// Stream plans the stream processor over the aggregations w declares.
func (p *Plan) Stream(b config.Backends, w config.Window, s config.Stream) error {
	if err := p.use(b); err != nil {
		return err
	}
	return once(&p.stream, streamPlan{window: w, stream: s}, "the stream processor")
}

// Sweep plans the landing sweeper of cfg, over the ingest service of
// cfg.Ingest.
func (p *Plan) Sweep(cfg config.Sweep) error {
	if err := p.Ingest(cfg.Ingest); err != nil {
		return err
	}
	return once(&p.sweep, cfg, "the sweeper")
}

func (p *Plan) use(b config.Backends) error {
	if p.backends != nil && *p.backends != b {
		return fmt.Errorf("two functions of this process name different backends (%+v and %+v): "+
			"one process has one set of clients", *p.backends, b)
	}
	p.backends = &b
	return nil
}

// once plans cfg for what unless another function planned it otherwise.
func once[T any](planned **T, cfg T, what string) error {
	if *planned != nil && !reflect.DeepEqual(**planned, cfg) {
		return fmt.Errorf("two functions of this process configure %s differently: %+v and %+v",
			what, **planned, cfg)
	}
	*planned = &cfg
	return nil
}

// Build opens the clients plan needs and builds its services over them,
// failing on the first that cannot be built; on failure whatever it opened
// is closed again. An empty plan builds an App with no client.
func Build(ctx context.Context, plan Plan, opts Options) (_ *App, err error) {
	a := &App{Log: opts.Logger, Now: opts.Now, Lookup: opts.Lookup}
	if a.Log == nil {
		a.Log = logging.New(os.Stdout, slog.LevelInfo)
	}
	if a.Now == nil {
		a.Now = time.Now
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, a.Close())
		}
	}()
	if plan.backends == nil {
		return a, nil
	}
	b := *plan.backends

	// The warehouse first: a misconfigured one is the likeliest mistake and
	// must be reported before any cloud client asks for credentials.
	if a.Warehouse, err = a.openWarehouse(ctx, b, opts); err != nil {
		return nil, err
	}
	if plan.ingest != nil && a.Objects == nil {
		if a.Objects, err = a.openObjects(ctx, opts); err != nil {
			return nil, err
		}
	}
	if a.Store, err = a.openStore(ctx, b); err != nil {
		return nil, err
	}
	if cfg := plan.ingest; cfg != nil {
		if a.Ledger, err = ledger.New(a.Store, ledger.Options{Lease: cfg.Lease}); err != nil {
			return nil, err
		}
		feeds, err := contract.Default()
		if err != nil {
			return nil, err
		}
		icfg := ingest.Config{
			QuarantineBucket: cfg.QuarantineBucket,
			QuarantinePrefix: cfg.QuarantinePrefix,
			LandingBucket:    cfg.LandingBucket,
			LandingPrefixes:  cfg.LandingPrefixes,
			MaxRecordBytes:   cfg.MaxRecordBytes,
			Deadline:         cfg.Deadline,
		}
		if a.Ingest, err = ingest.New(a.Objects, a.Ledger, a.Warehouse, feeds, icfg, a.Now, a.Log); err != nil {
			return nil, err
		}
	}
	if sp := plan.stream; sp != nil {
		a.Stream, err = stream.New(a.Store, a.Warehouse, sp.window.Specs(), contract.IsCountry, a.Log,
			sp.stream.Options()...)
		if err != nil {
			return nil, err
		}
	}
	if cfg := plan.sweep; cfg != nil {
		// Over this process's ingest service, so a swept file takes exactly
		// the path of a drop.
		opts := sweep.Options{
			Bucket:      cfg.LandingBucket,
			Prefixes:    cfg.LandingPrefixes,
			Window:      cfg.Window,
			Grace:       cfg.Grace,
			MaxObjects:  cfg.MaxObjects,
			Concurrency: cfg.Concurrency,
			Now:         a.Now,
			Log:         a.Log,
		}
		if a.Sweeper, err = sweep.New(a.Objects, a.Ledger, reingest.Direct{Service: a.Ingest}, opts); err != nil {
			return nil, err
		}
	}
	return a, nil
}
