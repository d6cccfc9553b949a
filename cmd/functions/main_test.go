package main

import (
	"context"
	"testing"

	"github.com/sethvargo/go-envconfig"

	"github.com/alpinashop/alpipe/functions"
	"github.com/alpinashop/alpipe/internal/config"
)

// TestBindHostIsLoopbackOffCloudRun: like cmd/server, the framework's entry
// listens on every interface only on Cloud Run (K_SERVICE set), and
// LOCAL_ONLY=true, the framework's own switch, keeps it on loopback there
// too.
func TestBindHostIsLoopbackOffCloudRun(t *testing.T) {
	for _, tt := range []struct {
		name string
		env  map[string]string
		want string
	}{
		{"a laptop", nil, "127.0.0.1"},
		{"a laptop, LOCAL_ONLY=true", map[string]string{"LOCAL_ONLY": "true"}, "127.0.0.1"},
		{"Cloud Run", map[string]string{"K_SERVICE": "alpipe-ingest"}, ""},
		{"Cloud Run, LOCAL_ONLY=true", map[string]string{"K_SERVICE": "alpipe-ingest", "LOCAL_ONLY": "true"}, "127.0.0.1"},
	} {
		var p functions.Platform
		if err := config.Load(context.Background(), &p, envconfig.MapLookuper(tt.env)); err != nil {
			t.Fatal(err)
		}
		if got := bindHost(p); got != tt.want {
			t.Errorf("%s: bindHost(%v) = %q, want %q", tt.name, tt.env, got, tt.want)
		}
	}
}
