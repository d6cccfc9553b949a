package local

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/localapi"
)

// A hostile page, served from another loopback origin and opened in
// headless Chromium, tries every route of a running serve: it must read
// nothing and change nothing. The WebDriver client is the dashboard
// browser test's, cut to what this test needs.

// hostilePage fetches each route of target: cross-origin reads (mode
// "cors", which needs the server's grant) and blind writes (mode
// "no-cors": a simple request the browser sends without a preflight).
const hostilePage = `<!doctype html><title>hostile</title><script>
const T = %q, Q = %q;
const attempts = [
  ["list landing", "GET", "/storage/v1/b/alpinashop-catalogo/o", "cors"],
  ["download quarantine", "GET", "/storage/v1/b/alpinashop-cuarentena/o/" + encodeURIComponent(Q) + "?alt=media", "cors"],
  ["download link", "GET", "/download/storage/v1/b/alpinashop-cuarentena/o/" + encodeURIComponent(Q) + "?alt=media", "cors"],
  ["delete quarantine object", "DELETE", "/storage/v1/b/alpinashop-cuarentena/o/" + encodeURIComponent(Q), "cors"],
  ["upload to landing", "POST", "/upload/storage/v1/b/alpinashop-catalogo/o?uploadType=media&name=exportaciones/2026/03/14/evil.csv", "no-cors",
   "pedido_id,linea,fecha,sku,cantidad,precio_unitario,cliente_id,pais\nP-EVIL,1,2026-03-14,MOCH-40L-AZ,1,\"89,90\",C-1,ES\n"],
  ["delete all buckets", "POST", "/_internal/delete_all", "no-cors", ""],
  ["ingest (legacy event, text/plain)", "POST", "/IngestCSV", "no-cors",
   JSON.stringify({context: {eventId: "x", eventType: "google.storage.object.finalize", resource: {service: "storage.googleapis.com", name: "projects/_/buckets/alpinashop-catalogo/objects/exportaciones/2026/03/14/evil.csv", type: "storage#object"}},
                   data: {bucket: "alpinashop-catalogo", name: "exportaciones/2026/03/14/evil.csv", generation: "1"}})],
  ["push an order (text/plain)", "POST", "/AggregateOrders", "no-cors", JSON.stringify({message: {data: btoa("{}"), messageId: "evil"}})],
  ["tick (text/plain)", "POST", "/AdvanceWatermark", "no-cors", "{}"],
  ["sweep (text/plain)", "POST", "/SweepLanding", "no-cors", "{}"],
  ["local query (text/plain)", "POST", "/_local/query", "no-cors", JSON.stringify({sql: "DELETE FROM lineas_pedido"})],
  ["local ledger", "GET", "/_local/ledger", "cors"],
  ["local query read", "POST", "/_local/query", "cors", JSON.stringify({sql: "SELECT 1"})],
  ["dashboard", "GET", "/", "cors"],
];
window.results = null;
(async () => {
  const out = [];
  for (const [name, method, path, mode, body] of attempts) {
    const init = {method, mode, credentials: "include"};
    if (body !== undefined && method !== "GET") { init.body = body; }
    try {
      const r = await fetch(T + path, init);
      let text = "";
      try { text = (await r.text()).slice(0, 80); } catch (e) {}
      out.push({name, got: r.type + " " + r.status + (text ? " " + text : "")});
    } catch (e) {
      out.push({name, got: "refused"});
    }
  }
  window.results = out;
})();
</script>`

func TestHostilePageGetsNothing(t *testing.T) {
	chromium, driver := needBrowser(t)
	s := startOwn(t)
	t.Cleanup(func() { _ = s.Shutdown("test") })
	ctx := context.Background()
	const qname = "cuarentena/2026/03/14/rechazos.csv"
	for _, o := range []struct{ bucket, name string }{{localapi.LandingBucket, "exportaciones/2026/03/14/pedidos.csv"}, {localapi.QuarantineBucket, qname}} {
		resp, err := http.Post(s.URL+"/upload/storage/v1/b/"+o.bucket+"/o?uploadType=media&name="+o.name, "text/csv", strings.NewReader("a,b\n1,2\n"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("seed %s: HTTP %d", o.name, resp.StatusCode)
		}
	}
	before := snapshot(ctx, t, s)

	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, hostilePage, s.URL, qname)
	}))
	defer page.Close()
	wd := startBrowser(t, chromium, driver)
	if err := wd.navigate(page.URL); err != nil {
		t.Fatal(err)
	}
	var results []struct{ Name, Got string }
	deadline := time.Now().Add(30 * time.Second)
	for results == nil && time.Now().Before(deadline) {
		if err := wd.execute("return window.results", &results); err != nil {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if results == nil {
		t.Fatal("the page did not finish its attempts within 30 s")
	}
	for _, r := range results {
		t.Logf("%-35s %s", r.Name, r.Got)
		// A cross-origin read is refused by the browser (no grant); a blind
		// write yields an opaque answer whose status the page cannot see.
		if r.Got != "refused" && r.Got != "opaque 0" {
			t.Errorf("%s: the page got %q, want nothing", r.Name, r.Got)
		}
	}
	if diff := cmp.Diff(before, snapshot(ctx, t, s)); diff != "" {
		t.Errorf("the page changed the server's state (-before +after):\n%s", diff)
	}
}

// state is what a hostile page could change.
type state struct {
	Objects     map[string][]string // bucket -> object names
	Ledger      int
	Lines       string // rows of lineas_pedido
	DeadLetters int
}

func snapshot(ctx context.Context, t *testing.T, s *Server) state {
	t.Helper()
	st := state{Objects: map[string][]string{}}
	for _, b := range []string{localapi.LandingBucket, localapi.QuarantineBucket, localapi.StagingBucket} {
		resp, err := http.Get(s.URL + "/storage/v1/b/" + b + "/o")
		if err != nil {
			t.Fatal(err)
		}
		var list struct{ Items []struct{ Name string } }
		err = json.NewDecoder(resp.Body).Decode(&list)
		resp.Body.Close()
		if err != nil {
			t.Fatalf("list %s: HTTP %d: %v", b, resp.StatusCode, err)
		}
		for _, it := range list.Items {
			st.Objects[b] = append(st.Objects[b], it.Name)
		}
	}
	recs, err := s.App.Ledger.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	st.Ledger = len(recs)
	res, err := s.App.Querier().Query(ctx, "SELECT COUNT(*) FROM lineas_pedido")
	if err != nil {
		t.Fatal(err)
	}
	st.Lines = fmt.Sprint(res.Rows)
	if st.DeadLetters, err = s.App.Stream.DeadLettersPending(ctx); err != nil {
		t.Fatal(err)
	}
	return st
}

// chromiumFlags: as root Chromium only starts without its sandbox, and
// without the background-networking flags it keeps dialling Google hosts.
var chromiumFlags = []string{
	"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
	"--disable-background-networking", "--disable-component-update", "--disable-sync",
	"--disable-dev-shm-usage",
}

// needBrowser finds Chromium and ChromeDriver (CHROMIUM and CHROMEDRIVER
// override the search), or skips the test; CI installs them (.ci/run), so
// there a browser proof fails rather than skip quietly.
func needBrowser(t *testing.T) (chromium, driver string) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts Chromium")
	}
	find := func(env string, names ...string) string {
		if p := os.Getenv(env); p != "" {
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

type webDriver struct {
	base, session string
}

func startBrowser(t *testing.T, chromium, driver string) *webDriver {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
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
	wd := &webDriver{base: "http://127.0.0.1:" + strconv.Itoa(port)}
	deadline := time.Now().Add(15 * time.Second)
	for {
		var st struct{ Ready bool }
		if err := wd.call(http.MethodGet, "/status", nil, &st); err == nil && st.Ready {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("chromedriver not ready after 15 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	args := append(append([]string{}, chromiumFlags...), "--user-data-dir="+t.TempDir())
	caps := map[string]any{"capabilities": map[string]any{"alwaysMatch": map[string]any{
		"browserName": "chrome", "goog:chromeOptions": map[string]any{"binary": chromium, "args": args},
	}}}
	var created struct {
		SessionID string `json:"sessionId"`
	}
	if err := wd.call(http.MethodPost, "/session", caps, &created); err != nil {
		t.Fatalf("new session: %v", err)
	}
	wd.session = created.SessionID
	t.Cleanup(func() { _ = wd.call(http.MethodDelete, "/session/"+wd.session, nil, nil) })
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
	req, err := http.NewRequest(method, wd.base+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := (&http.Client{Timeout: time.Minute}).Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var env struct {
		Value json.RawMessage `json:"value"`
	}
	raw, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(raw, &env); err != nil || resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s: HTTP %d: %.300s", method, path, resp.StatusCode, raw)
	}
	if value == nil {
		return nil
	}
	return json.Unmarshal(env.Value, value)
}

func (wd *webDriver) navigate(url string) error {
	return wd.call(http.MethodPost, "/session/"+wd.session+"/url", map[string]string{"url": url}, nil)
}

func (wd *webDriver) execute(script string, result any) error {
	return wd.call(http.MethodPost, "/session/"+wd.session+"/execute/sync", map[string]any{"script": script, "args": []any{}}, result)
}
