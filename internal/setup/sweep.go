package setup

import (
	"context"
	"errors"

	"github.com/alpinashop/alpipe/internal/config"
	"github.com/alpinashop/alpipe/internal/reingest"
	"github.com/alpinashop/alpipe/internal/sweep"
)

// BuildSweep builds SweepLanding: the ingest service of this process (built
// from the same configuration, so a swept file takes exactly the path of a
// file drop) plus a listing of the landing bucket.
func (a *App) BuildSweep(ctx context.Context, cfg config.Sweep) (*sweep.Sweeper, error) {
	a.mu.Lock()
	built := a.sweeper
	a.mu.Unlock()
	if built != nil {
		return built, nil
	}
	svc, err := a.BuildIngest(ctx, cfg.Ingest)
	if err != nil {
		return nil, err
	}
	objs, err := a.Objects(ctx)
	if err != nil {
		return nil, err
	}
	s, err := sweep.New(objs, a.Ledger(), reingest.Direct{Service: svc}, sweep.Options{
		Bucket:      cfg.LandingBucket,
		Prefixes:    cfg.LandingPrefixes,
		Window:      cfg.Window,
		Grace:       cfg.Grace,
		MaxObjects:  cfg.MaxObjects,
		Concurrency: cfg.Concurrency,
		Now:         a.now,
		Log:         a.log,
	})
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	a.sweeper = s
	a.mu.Unlock()
	return s, nil
}

// Sweeper returns the SweepLanding service.
func (a *App) Sweeper() (*sweep.Sweeper, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.sweeper == nil {
		return nil, errors.New("SweepLanding is not configured in this process")
	}
	return a.sweeper, nil
}
