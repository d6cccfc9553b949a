package config

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/sethvargo/go-envconfig"
)

func TestServingValidate(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		grace   time.Duration
		wantErr string // "" = valid
	}{
		{name: "defaults: 8 s, under Cloud Run's 10 s", env: map[string]string{}, grace: 8 * time.Second},
		{name: "a shorter grace", env: map[string]string{"SHUTDOWN_GRACE": "2s"}, grace: 2 * time.Second},
		{name: "the longest grace that leaves time for the cut and the close", env: map[string]string{"SHUTDOWN_GRACE": "8.5s"}, grace: 8500 * time.Millisecond},
		{name: "9.5 s plus the 1 s cut wait would outlive Cloud Run's 10 s", env: map[string]string{"SHUTDOWN_GRACE": "9.5s"}, wantErr: "at most 8.5s"},
		{name: "Cloud Run's whole 10 s leaves nothing for the cut", env: map[string]string{"SHUTDOWN_GRACE": "10s"}, wantErr: "SHUTDOWN_GRACE"},
		{name: "no grace", env: map[string]string{"SHUTDOWN_GRACE": "0s"}, wantErr: "SHUTDOWN_GRACE"},
		{name: "negative request timeout", env: map[string]string{"CLOUD_RUN_TIMEOUT_SECONDS": "-1"}, wantErr: "CLOUD_RUN_TIMEOUT_SECONDS"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c Serving
			err := Load(context.Background(), &c, envconfig.MapLookuper(tt.env))
			if tt.wantErr == "" {
				if err != nil || c.ShutdownGrace != tt.grace {
					t.Errorf("grace %s, error %v; want %s and no error", c.ShutdownGrace, err, tt.grace)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("error %v, want one naming %s", err, tt.wantErr)
			}
		})
	}
}
