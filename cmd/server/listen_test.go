package main

import (
	"net"
	"strings"
	"testing"
)

// TestListenBindsLoopbackOffCloudRun: on a laptop (no K_SERVICE) the server
// listens on 127.0.0.1 only, out of reach of the café's network; Cloud Run
// needs every interface, and sets K_SERVICE.
func TestListenBindsLoopbackOffCloudRun(t *testing.T) {
	tests := []struct {
		name     string
		service  string
		loopback bool
		logged   string // in the "serving" line's bind
	}{
		{name: "a laptop", service: "", loopback: true, logged: "loopback only"},
		{name: "Cloud Run", service: "alpipe-orders", loopback: false, logged: "every interface"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ln, err := listen(tt.service, "0")
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			ip := ln.Addr().(*net.TCPAddr).IP
			if got := ip.IsLoopback(); got != tt.loopback {
				t.Errorf("listens on %s: loopback %v, want %v", ln.Addr(), got, tt.loopback)
			}
			if !tt.loopback && !ip.IsUnspecified() {
				t.Errorf("listens on %s, want every interface", ln.Addr())
			}
			if got := bindReason(tt.service); !strings.Contains(got, tt.logged) {
				t.Errorf("logged bind %q, want it to say %q", got, tt.logged)
			}
		})
	}
}
