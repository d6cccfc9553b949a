package local

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alpinashop/alpipe/functions"
)

var benchSeq atomic.Int64

// BenchmarkPushOrders measures sustained orders per second through the
// local server's push endpoint: HTTP, the functions framework, decoding,
// validation, the embedded state store's transactions (fsynced, group
// committed) — everything but Pub/Sub itself. Run with
//
//	go test -run XXX -bench PushOrders -benchtime 20000x ./internal/local/
func BenchmarkPushOrders(b *testing.B) {
	countries := []string{"ES", "FR", "PT", "DE", "IT", "NL", "BE", "AT", "IE", "LU", "PL", "CZ", "SK", "HU", "SI",
		"HR", "RO", "BG", "GR", "CY", "MT", "DK", "SE", "FI", "EE", "LV", "LT", "CH", "NO", "GB"}
	for _, bc := range []struct {
		name string
		keys []string
	}{{"uniform_30_countries", countries}, {"hot_key", []string{"ES"}}} {
		b.Run(bc.name, func(b *testing.B) {
			// Event times an hour ahead of the clock: every order is on time
			// and lands in the same few windows, as in a busy hour.
			event := srv.Clock.Now().Add(time.Hour).Format(time.RFC3339)
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256}}
			b.SetParallelism(32)
			b.ResetTimer()
			start := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					n := benchSeq.Add(1)
					key := bc.keys[int(n)%len(bc.keys)]
					order := fmt.Sprintf(`{"pedido_id":"B-%d","pais":"%s","importe_total":"89.90","lineas":[{"sku":"MOCH-40L-AZ","cantidad":1,"precio_unitario":"89.90"}]}`, n, key)
					body := `{"message":{"data":"` + base64.StdEncoding.EncodeToString([]byte(order)) +
						`","attributes":{"momento_evento":"` + event + `"},"messageId":"bm-` + strconv.FormatInt(n, 10) +
						`","publishTime":"2026-03-14T17:00:00Z"},"subscription":"projects/p/subscriptions/s"}`
					resp, err := client.Post(srv.URL+"/"+functions.AggregateOrdersName, "application/json", bytes.NewBufferString(body))
					if err != nil {
						b.Fatal(err)
					}
					_, _ = io.Copy(io.Discard, resp.Body) // so the connection is reused
					resp.Body.Close()
					if resp.StatusCode != http.StatusOK {
						b.Fatalf("HTTP %d", resp.StatusCode)
					}
				}
			})
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "orders/s")
		})
	}
}
