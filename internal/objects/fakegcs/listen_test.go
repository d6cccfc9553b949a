package fakegcs

import (
	"fmt"
	"net"
	"net/http"
	"time"
)

// Listen serves Handler on a free loopback port and returns its base URL,
// e.g. http://127.0.0.1:41234. Test-only (this file), for tests that need a real socket (a
// client that hangs up mid-request); Close stops it. Nothing else listens.
func (l *Server) Listen() (string, error) {
	if l.server != nil {
		return l.url, nil
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("listen for fake storage: %w", err)
	}
	l.url = "http://" + ln.Addr().String()
	l.server = &http.Server{Handler: l.handler, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = l.server.Serve(ln) }()
	return l.url, nil
}
