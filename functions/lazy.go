package functions

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"sync"

	cloudevents "github.com/cloudevents/sdk-go/v2"

	"github.com/alpinashop/alpipe/internal/config"
	"github.com/alpinashop/alpipe/internal/logging"
	"github.com/alpinashop/alpipe/internal/setup"
)

// Lazy is the process behind the functions framework's registrations
// (package alpipe). The framework wants them made in an init(), which the
// tests that import that package run too, so a registered function builds
// nothing itself: PrepareTarget runs once, before serving (cmd/functions,
// or PrepareOnCloudRun in init), or else on the first request. A failed
// preparation is kept: every request then answers 500 naming it, as no
// retry can fix a configuration.
type Lazy struct {
	mu       sync.Mutex
	prepared bool
	proc     *Process
	cfg      config.Server
	err      error
	log      *slog.Logger
}

// Prepare builds the process with opts unless it is built already; either
// way it returns what the first preparation built.
func (l *Lazy) Prepare(ctx context.Context, opts setup.Options) (*Process, config.Server, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.prepared {
		if opts.Logger == nil {
			opts.Logger = logging.New(os.Stdout, slog.LevelInfo)
		}
		l.log = opts.Logger
		l.proc, l.cfg, l.err = PrepareTarget(ctx, opts)
		l.prepared = true
	}
	return l.proc, l.cfg, l.err
}

// PrepareOnCloudRun prepares the process now when it runs on Cloud Run
// (K_SERVICE set), and logs why it could not: package alpipe's init exits
// on the error, so that an instance that cannot start fails its revision
// rather than answer 500 to every request. Elsewhere it does nothing.
func (l *Lazy) PrepareOnCloudRun() error {
	var plat Platform
	if err := config.Load(context.Background(), &plat, nil); err != nil || plat.Service == "" {
		return err
	}
	_, _, err := l.Prepare(context.Background(), setup.Options{})
	if err != nil {
		l.log.Error("function not started", "error", err.Error())
	}
	return err
}

// Platform is what a serving process reads of where it runs: Cloud Run
// sets K_SERVICE; LOCAL_ONLY is the functions framework's switch to
// loopback.
type Platform struct {
	Service   string `env:"K_SERVICE"`
	LocalOnly bool   `env:"LOCAL_ONLY"`
}

func (Platform) Validate() error { return nil }

// handler is the named function, prepared on first use.
func (l *Lazy) handler(name string) (Handler, error) {
	// Not the request's context: a cancelled first request must not leave
	// the process without its clients.
	proc, cfg, err := l.Prepare(context.Background(), setup.Options{})
	if err != nil {
		return Handler{}, fmt.Errorf("%s cannot serve: %w", name, err)
	}
	for _, h := range proc.Handlers {
		if h.Name == name {
			return h, nil
		}
	}
	return Handler{}, fmt.Errorf("%s is not served here: FUNCTION_TARGET=%s", name, cfg.Target)
}

// HTTP is the named function as the framework's functions.HTTP registers
// it; the framework adds what Mount adds for cmd/server.
func (l *Lazy) HTTP(name string) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		h, err := l.handler(name)
		if err != nil {
			l.refuse(r.Context(), err)
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		h.ServeHTTP(w, r)
	}
}

// CloudEvent is the named CloudEvent function as the framework's
// functions.CloudEvent registers it; its errors answer 500.
func (l *Lazy) CloudEvent(name string) func(context.Context, cloudevents.Event) error {
	return func(ctx context.Context, e cloudevents.Event) error {
		h, err := l.handler(name)
		if err == nil && h.Event == nil {
			err = fmt.Errorf("%s is not a CloudEvent function", name)
		}
		if err != nil {
			l.refuse(ctx, err)
			return err
		}
		return h.Event(ctx, e)
	}
}

// refuse logs why a request found no function to run.
func (l *Lazy) refuse(ctx context.Context, err error) {
	l.log.ErrorContext(ctx, "request refused", "error", err.Error())
}
