package setup

import (
	"fmt"
	"reflect"

	"github.com/alpinashop/alpipe/internal/config"
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
