// Package browsertest drives headless Chromium for the browser tests: a
// W3C WebDriver client for chromedriver on the standard library alone.
package browsertest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// flags are the launch flags this machine needs: as root Chromium only
// starts without its sandbox, and without the background-networking flags
// it keeps dialling Google hosts that a closed network refuses.
var flags = []string{
	"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
	"--disable-background-networking", "--disable-component-update", "--disable-sync",
	"--disable-dev-shm-usage", "--window-size=1280,1000",
}

// Find returns Chromium and ChromeDriver (CHROMIUM and CHROMEDRIVER
// override the search), or skips the test under -short or when they are
// missing; in CI, which installs them, a missing browser fails the test
// rather than skip a browser proof quietly.
func Find(t testing.TB) (chromium, driver string) {
	t.Helper()
	if testing.Short() {
		t.Skip("skipped under -short: starts headless Chromium")
	}
	find := func(env string, names ...string) string {
		if p := os.Getenv(env); p != "" {
			if _, err := os.Stat(p); err != nil {
				return ""
			}
			return p
		}
		for _, n := range names {
			if p, err := exec.LookPath(n); err == nil {
				return p
			}
		}
		return ""
	}
	chromium = find("CHROMIUM", "chromium", "chromium-browser")
	driver = find("CHROMEDRIVER", "chromedriver")
	if chromium == "" || driver == "" {
		why := "chromium or chromedriver not found (run scripts/chromium.sh, or set CHROMIUM / CHROMEDRIVER)"
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI without the browser: %s", why)
		}
		t.Skip(why)
	}
	return chromium, driver
}

type Driver struct {
	base, session string // base: http://127.0.0.1:port
	http          *http.Client
}

// Start runs chromedriver and opens a session of headless Chromium with a
// fresh profile; both end with the test. Start it after the servers the
// page talks to, so that it ends before them: an open page holds
// connections a server's shutdown would wait for.
func Start(t testing.TB, chromium, driver string) *Driver {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0") // a free port
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(driver, "--port="+strconv.Itoa(port), "--allowed-ips=127.0.0.1")
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", driver, err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("chromedriver output:\n%s", logs.String())
		}
	})
	d := &Driver{base: "http://127.0.0.1:" + strconv.Itoa(port), http: &http.Client{Timeout: time.Minute}}
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		var st struct{ Ready bool }
		err := d.call(http.MethodGet, "/status", nil, &st)
		if err == nil && st.Ready {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("chromedriver not ready after 15 s: %v", err)
		}
	}
	args := append(slices.Clone(flags), "--user-data-dir="+t.TempDir())
	caps := map[string]any{"capabilities": map[string]any{"alwaysMatch": map[string]any{
		"browserName": "chrome", "goog:chromeOptions": map[string]any{"binary": chromium, "args": args},
	}}}
	var created struct {
		SessionID    string         `json:"sessionId"`
		Capabilities map[string]any `json:"capabilities"`
	}
	if err := d.call(http.MethodPost, "/session", caps, &created); err != nil {
		t.Fatalf("new session: %v", err)
	}
	d.session = "/session/" + created.SessionID
	t.Logf("browser %v %v", created.Capabilities["browserName"], created.Capabilities["browserVersion"])
	t.Cleanup(func() {
		if err := d.call(http.MethodDelete, d.session, nil, nil); err != nil {
			t.Logf("end session: %v", err)
		}
	})
	return d
}

func (d *Driver) call(method, path string, body, value any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, d.base+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := d.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	var env struct {
		Value json.RawMessage `json:"value"`
	}
	if err := json.Unmarshal(raw, &env); err != nil {
		return fmt.Errorf("%s %s: HTTP %d: %.200s", method, path, resp.StatusCode, raw)
	}
	if resp.StatusCode != http.StatusOK {
		var e struct{ Error, Message string }
		_ = json.Unmarshal(env.Value, &e)
		// The message's first line says it; the rest is chromedriver's stack.
		msg, _, _ := strings.Cut(e.Message, "\n")
		return fmt.Errorf("%s %s: HTTP %d: %s: %s", method, path, resp.StatusCode, e.Error, msg)
	}
	if value == nil {
		return nil
	}
	return json.Unmarshal(env.Value, value)
}

func (d *Driver) Navigate(url string) error {
	return d.call(http.MethodPost, d.session+"/url", map[string]string{"url": url}, nil)
}

// Execute runs a synchronous script in the page and decodes its result
// into result (nil: discarded).
func (d *Driver) Execute(script string, result any) error {
	return d.call(http.MethodPost, d.session+"/execute/sync", map[string]any{"script": script, "args": []any{}}, result)
}

// Resize sets the window's outer size.
func (d *Driver) Resize(width, height int) error {
	return d.call(http.MethodPost, d.session+"/window/rect", map[string]int{"width": width, "height": height}, nil)
}
