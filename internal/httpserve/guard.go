package httpserve

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"
)

// Guard stands in front of a server on the user's machine that must only
// ever serve the user's own tools (alpipe serve runs arbitrary SQL and
// writes panes on request):
//
//   - clients must connect from a loopback address, unless the user asked
//     for the network (AllowRemote);
//   - the Host header must name this machine (localhost or a loopback IP)
//     or a host the user listed (Hosts): a page whose DNS name was rebound
//     to 127.0.0.1, or to this machine's address on the network, sends its
//     own name and is refused. AllowRemote keeps this check: clients on
//     other machines use a name (or IP) listed in Hosts;
//   - a request a browser marks as cross-origin (Origin of another site,
//     Sec-Fetch-Site cross-site or same-site) is refused, so a web page in
//     the user's browser cannot post to it. The CLI, the storage client and
//     the Pub/Sub emulator send neither header.
type Guard struct {
	AllowRemote bool
	Hosts       []string // Host names (or IPs) to accept besides localhost and loopback IPs
	// RemoteHint and HostHint say, in the refusal of another machine and of
	// another Host name, what the user can do about it (plain text).
	RemoteHint, HostHint string
}

// Wrap answers 403 "name: reason" to what Refuse refuses.
func (g Guard) Wrap(name string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if reason := g.Refuse(r); reason != "" {
			http.Error(w, name+": "+reason, http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// Refuse says why r must not be served, or "".
func (g Guard) Refuse(r *http.Request) string {
	if !g.AllowRemote && !loopbackPeer(r.RemoteAddr) {
		reason := fmt.Sprintf("client %s is not on this machine", r.RemoteAddr)
		if g.RemoteHint != "" {
			reason += " (" + g.RemoteHint + ")"
		}
		return reason
	}
	host := hostOnly(r.Host)
	listed := slices.ContainsFunc(g.Hosts, func(h string) bool { return strings.EqualFold(h, host) })
	if !isLoopbackName(host) && !listed {
		hint := "DNS rebinding protection"
		if g.HostHint != "" {
			hint += "; " + g.HostHint
		}
		return fmt.Sprintf("host %q is not this machine (%s)", r.Host, hint)
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

// IsLoopback says whether a listen address (HOST:PORT) names this machine
// only: localhost or a loopback IP.
func IsLoopback(hostport string) bool { return isLoopbackName(hostOnly(hostport)) }

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
