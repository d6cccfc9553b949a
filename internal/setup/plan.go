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

// Plan is what a process runs, from its functions' configurations: the
// backends they name and the services they need. Two functions of one
// process share one set of clients, so they must name the same backends,
// and a shared service must be configured alike by both; a Plan refuses
// anything else rather than open a second client.
type Plan struct {
	backends *config.Backends
	objects  bool
	ingest   *config.Ingest
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
	if p.ingest != nil && !reflect.DeepEqual(*p.ingest, cfg) {
		return fmt.Errorf("two functions of this process configure the ingest service differently: %+v and %+v", *p.ingest, cfg)
	}
	p.ingest, p.objects = &cfg, true
	return nil
}

// Stream plans the stream processor over the aggregations w declares.
func (p *Plan) Stream(b config.Backends, w config.Window, s config.Stream) error {
	if err := p.use(b); err != nil {
		return err
	}
	sp := &streamPlan{window: w, stream: s}
	if p.stream != nil && !reflect.DeepEqual(*p.stream, *sp) {
		return fmt.Errorf("two functions of this process configure the stream processor differently: %+v and %+v", *p.stream, *sp)
	}
	p.stream = sp
	return nil
}

// Sweep plans the landing sweeper of cfg, over the ingest service of
// cfg.Ingest.
func (p *Plan) Sweep(cfg config.Sweep) error {
	if err := p.Ingest(cfg.Ingest); err != nil {
		return err
	}
	if p.sweep != nil && !reflect.DeepEqual(*p.sweep, cfg) {
		return fmt.Errorf("two functions of this process configure the sweeper differently: %+v and %+v", *p.sweep, cfg)
	}
	p.sweep = &cfg
	return nil
}

func (p *Plan) use(b config.Backends) error {
	if p.backends == nil {
		p.backends = &b
		return nil
	}
	if *p.backends != b {
		return fmt.Errorf("two functions of this process name different backends (%+v and %+v): one process has one set of clients", *p.backends, b)
	}
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
	if plan.objects && a.Objects == nil {
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
		feeds, ferr := contract.Default()
		if ferr != nil {
			return nil, ferr
		}
		if a.Ingest, err = ingest.New(a.Objects, a.Ledger, a.Warehouse, feeds, ingest.Config{
			QuarantineBucket: cfg.QuarantineBucket,
			QuarantinePrefix: cfg.QuarantinePrefix,
			LandingBucket:    cfg.LandingBucket,
			LandingPrefixes:  cfg.LandingPrefixes,
			MaxRecordBytes:   cfg.MaxRecordBytes,
			Deadline:         cfg.Deadline,
		}, a.Now, a.Log); err != nil {
			return nil, err
		}
	}
	if sp := plan.stream; sp != nil {
		if a.Stream, err = stream.New(a.Store, a.Warehouse, sp.window.Specs(), contract.IsCountry, a.Log, sp.stream.Options()...); err != nil {
			return nil, err
		}
	}
	if cfg := plan.sweep; cfg != nil {
		// The ingest service of this process, built from the same
		// configuration, so a swept file takes exactly the path of a drop.
		if a.Sweeper, err = sweep.New(a.Objects, a.Ledger, reingest.Direct{Service: a.Ingest}, sweep.Options{
			Bucket:      cfg.LandingBucket,
			Prefixes:    cfg.LandingPrefixes,
			Window:      cfg.Window,
			Grace:       cfg.Grace,
			MaxObjects:  cfg.MaxObjects,
			Concurrency: cfg.Concurrency,
			Now:         a.Now,
			Log:         a.Log,
		}); err != nil {
			return nil, err
		}
	}
	return a, nil
}
