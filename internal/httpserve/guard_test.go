package httpserve

import (
	"cmp"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestGuardRefuse(t *testing.T) {
	tests := []struct {
		name         string
		allowRemote  bool
		hosts        []string
		remote, host string // default 127.0.0.1:5000 and 127.0.0.1:8080
		origin, site string // the Origin and Sec-Fetch-Site headers
		want         string // "" = served
	}{
		{name: "the CLI"},
		{name: "localhost by name over IPv6", remote: "[::1]:5000", host: "localhost:8080"},
		{name: "the dashboard's own fetch", origin: "http://127.0.0.1:8080", site: "same-origin"},
		{name: "typed in the address bar", site: "none"},
		{name: "another machine", remote: "192.0.2.7:5000", want: "not on this machine"},
		{name: "another machine, allowed", allowRemote: true, hosts: []string{"laptop.lan"}, remote: "192.0.2.7:5000", host: "laptop.lan:8080"},
		{name: "another machine by a listed IP", allowRemote: true, hosts: []string{"192.0.2.1"}, remote: "192.0.2.7:5000", host: "192.0.2.1:8080"},
		{name: "DNS rebinding with --allow-remote", allowRemote: true, hosts: []string{"laptop.lan"}, host: "attacker.example:8080", want: "DNS rebinding"},
		{name: "an unlisted name with --allow-remote", allowRemote: true, remote: "192.0.2.7:5000", host: "laptop.lan:8080", want: "DNS rebinding"},
		{name: "loopback name with --allow-remote", allowRemote: true, host: "localhost:8080"},
		{name: "DNS rebinding", host: "attacker.example:8080", want: "DNS rebinding"},
		{name: "a listed host name", hosts: []string{"Alpipe.Test"}, host: "alpipe.test:8080"},
		{name: "cross-site form post", origin: "https://attacker.example", want: "cross-origin"},
		{name: "other port is another origin", origin: "http://127.0.0.1:3000", want: "cross-origin"},
		{name: "sandboxed page", origin: "null", want: "opaque origin"},
		{name: "cross-site no-cors fetch without Origin", site: "cross-site", want: "cross-site"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			host := cmp.Or(tt.host, "127.0.0.1:8080")
			r := httptest.NewRequest(http.MethodPost, "http://"+host+"/_local/query", nil)
			r.RemoteAddr = cmp.Or(tt.remote, "127.0.0.1:5000")
			for k, v := range map[string]string{"Origin": tt.origin, "Sec-Fetch-Site": tt.site} {
				if v != "" {
					r.Header.Set(k, v)
				}
			}
			got := Guard{AllowRemote: tt.allowRemote, Hosts: tt.hosts}.Refuse(r)
			if tt.want == "" && got != "" || !strings.Contains(got, tt.want) {
				t.Fatalf("refusal %q, want one saying %q (\"\" = served)", got, tt.want)
			}
		})
	}
}
