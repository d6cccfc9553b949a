package local

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// guard stands in front of everything the local server answers: the
// functions, the fake Cloud Storage, the query and admin endpoints and the
// warehouse. The server runs arbitrary SQL and writes panes on request, so
// it must only ever serve the user's own tools:
//
//   - clients must connect from a loopback address, unless the user asked
//     for the network (serve --allow-remote);
//   - the Host header must name this machine (localhost or a loopback IP)
//     or a host the user listed (serve --host): a page whose DNS name was
//     rebound to 127.0.0.1, or to this machine's address on the network,
//     sends its own name and is refused. --allow-remote keeps this check:
//     clients on other machines use a name (or IP) given with --host;
//   - a request a browser marks as cross-origin (Origin of another site,
//     Sec-Fetch-Site cross-site or same-site) is refused, so a web page in
//     the user's browser cannot post to it. The CLI, the storage client and
//     the Pub/Sub emulator send neither header.
type guard struct {
	allowRemote bool
	hosts       map[string]bool // extra Host names, lower case, without port
}

func newGuard(allowRemote bool, hosts []string) guard {
	g := guard{allowRemote: allowRemote, hosts: map[string]bool{}}
	for _, h := range hosts {
		g.hosts[strings.ToLower(h)] = true
	}
	return g
}

func (g guard) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if reason := g.refuse(r); reason != "" {
			http.Error(w, "alpipe serve: "+reason, http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// refuse says why r must not be served, or "".
func (g guard) refuse(r *http.Request) string {
	if !g.allowRemote && !loopbackPeer(r.RemoteAddr) {
		return fmt.Sprintf("client %s is not on this machine (serve --allow-remote serves the network)", r.RemoteAddr)
	}
	host := hostOnly(r.Host)
	if !isLoopbackName(host) && !g.hosts[host] {
		return fmt.Sprintf("host %q is not this machine (DNS rebinding protection; serve --host NAME allows another name)", r.Host)
	}
	switch o := r.Header.Get("Origin"); {
	case o == "null":
		return "request from an opaque origin refused"
	case o != "" && !strings.EqualFold(o, "http://"+r.Host):
		return fmt.Sprintf("cross-origin request from %s refused", o)
	}
	switch r.Header.Get("Sec-Fetch-Site") {
	case "", "same-origin", "none":
	default:
		return "cross-site request refused"
	}
	return ""
}

func loopbackPeer(remote string) bool {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		host = remote
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}

func hostOnly(hostport string) string {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = hostport
	}
	return strings.ToLower(strings.Trim(host, "[]"))
}

func isLoopbackName(host string) bool {
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}
