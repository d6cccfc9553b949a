package dashboard_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A W3C WebDriver client over net/http, just what the browser test needs:
// chromedriver drives Debian's headless Chromium, and no module beyond the
// standard library is involved.

// chromiumFlags are the launch flags this machine needs: as root Chromium
// only starts without its sandbox, and without the background-networking
// flags it keeps dialling Google hosts that a closed network refuses.
var chromiumFlags = []string{
	"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
	"--disable-background-networking", "--disable-component-update", "--disable-sync",
	"--disable-dev-shm-usage", "--window-size=1280,1000",
}

// browserBinaries finds Chromium and ChromeDriver (CHROMIUM and
// CHROMEDRIVER override the search), or says why the test cannot run.
func browserBinaries() (chromium, driver string, why string) {
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
	var missing []string
	if chromium == "" {
		missing = append(missing, "chromium")
	}
	if driver == "" {
		missing = append(missing, "chromedriver")
	}
	if len(missing) > 0 {
		return "", "", strings.Join(missing, " and ") + " not found (run scripts/chromium.sh, or set CHROMIUM / CHROMEDRIVER)"
	}
	return chromium, driver, ""
}

type webDriver struct {
	base    string // http://127.0.0.1:port
	session string
	http    *http.Client
}

// startBrowser runs chromedriver on a free port and opens a session of
// headless Chromium with a fresh profile; both end with the test.
func startBrowser(t *testing.T, chromium, driver string) *webDriver {
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
	wd := &webDriver{base: "http://127.0.0.1:" + strconv.Itoa(port), http: &http.Client{Timeout: 60 * time.Second}}
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		var st struct {
			Ready bool `json:"ready"`
		}
		err := wd.call(http.MethodGet, "/status", nil, &st)
		if err == nil && st.Ready {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("chromedriver not ready after 15 s: %v", err)
		}
	}
	args := append(append([]string{}, chromiumFlags...), "--user-data-dir="+t.TempDir())
	caps := map[string]any{"capabilities": map[string]any{"alwaysMatch": map[string]any{
		"browserName":        "chrome",
		"goog:chromeOptions": map[string]any{"binary": chromium, "args": args},
	}}}
	var created struct {
		SessionID    string         `json:"sessionId"`
		Capabilities map[string]any `json:"capabilities"`
	}
	if err := wd.call(http.MethodPost, "/session", caps, &created); err != nil {
		t.Fatalf("new session: %v", err)
	}
	wd.session = created.SessionID
	t.Logf("browser %v %v", created.Capabilities["browserName"], created.Capabilities["browserVersion"])
	t.Cleanup(func() {
		if err := wd.call(http.MethodDelete, "/session/"+wd.session, nil, nil); err != nil {
			t.Logf("end session: %v", err)
		}
	})
	return wd
}

// call sends one WebDriver command and decodes its "value".
func (wd *webDriver) call(method, path string, body, value any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(context.Background(), method, wd.base+path, rd)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := wd.http.Do(req)
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
		return fmt.Errorf("%s %s: HTTP %d: %s: %s", method, path, resp.StatusCode, e.Error, firstLine(e.Message))
	}
	if value == nil {
		return nil
	}
	return json.Unmarshal(env.Value, value)
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

func (wd *webDriver) navigate(url string) error {
	return wd.call(http.MethodPost, "/session/"+wd.session+"/url", map[string]string{"url": url}, nil)
}

// execute runs a synchronous script in the page and decodes what it returns.
func (wd *webDriver) execute(script string, result any) error {
	return wd.call(http.MethodPost, "/session/"+wd.session+"/execute/sync", map[string]any{"script": script, "args": []any{}}, result)
}

// screenshot writes the page as a PNG.
func (wd *webDriver) screenshot(path string) error {
	var b64 string
	if err := wd.call(http.MethodGet, "/session/"+wd.session+"/screenshot", nil, &b64); err != nil {
		return err
	}
	png, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return errors.Join(errors.New("screenshot is not base64"), err)
	}
	return os.WriteFile(path, png, 0o644)
}

// resize sets the browser window's outer size, e.g. tall enough for a
// screenshot of the whole page.
func (wd *webDriver) resize(width, height int) error {
	return wd.call(http.MethodPost, "/session/"+wd.session+"/window/rect", map[string]int{"width": width, "height": height}, nil)
}
