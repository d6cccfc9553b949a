package main

import (
	"context"
	"testing"

	"github.com/sethvargo/go-envconfig"

	"github.com/alpinashop/alpipe/internal/config"
)

// TestBindHostIsLoopbackOffCloudRun: like cmd/server, the framework's entry
// listens on every interface only on Cloud Run (K_SERVICE set), and
// LOCAL_ONLY=true, the framework's own switch, keeps it on loopback there
// too.
func TestBindHostIsLoopbackOffCloudRun(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want string
	}{
		{name: "a laptop", want: "127.0.0.1"},
		{name: "a laptop, LOCAL_ONLY=true", env: map[string]string{"LOCAL_ONLY": "true"}, want: "127.0.0.1"},
		{name: "Cloud Run", env: map[string]string{"K_SERVICE": "alpipe-ingest"}, want: ""},
		{name: "Cloud Run, LOCAL_ONLY=true", env: map[string]string{"K_SERVICE": "alpipe-ingest", "LOCAL_ONLY": "true"}, want: "127.0.0.1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var p platform
			if err := config.Load(context.Background(), &p, envconfig.MapLookuper(tt.env)); err != nil {
				t.Fatal(err)
			}
			if got := bindHost(p); got != tt.want {
				t.Errorf("bindHost(%v) = %q, want %q", tt.env, got, tt.want)
			}
		})
	}
}
