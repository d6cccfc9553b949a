package client

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"cloud.google.com/go/pubsub/v2"
	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/alpinashop/alpipe/internal/localapi"
	"github.com/alpinashop/alpipe/internal/order"
	"github.com/alpinashop/alpipe/internal/replay"
	"github.com/alpinashop/alpipe/internal/stream"
)

// Step is one line of an orders file: an order to publish (with its event
// time and, for stories, the processing time it arrives at), or a tick.
type Step struct {
	Arrival   time.Time       // llegada: processing time of delivery (zero: now)
	EventTime string          // momento_evento attribute, passed through as written
	Order     json.RawMessage // the message body
	Tick      time.Time       // non-zero: call AdvanceWatermark at this time instead
	Note      string          // nota: what the step shows
}

// ReadSteps reads an orders JSONL file. A line is either
//
//	{"momento_evento": "...", "pedido": {...}, "llegada": "...", "nota": "..."}
//	{"momento_evento": "...", "pedido_id": "...", ...}   (the order itself, plus its event time)
//	{"tick": "2026-03-14T19:00:00Z"}
func ReadSteps(r io.Reader) ([]Step, error) {
	var steps []Step
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 10<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Bytes()
		if n == 1 {
			// Editors on Windows start a UTF-8 file with a byte order mark,
			// which JSON does not allow.
			line = bytes.TrimPrefix(line, []byte("\ufeff"))
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(line, &fields); err != nil {
			return nil, fmt.Errorf("line %d %q is not a JSON object: %w", n, clip(line, 40), err)
		}
		var s Step
		take := func(key string, v any) error {
			raw, ok := fields[key]
			delete(fields, key)
			if !ok {
				return nil
			}
			return json.Unmarshal(raw, v)
		}
		if _, ok := fields["tick"]; ok {
			if err := take("tick", &s.Tick); err != nil {
				return nil, fmt.Errorf("line %d: tick: %w", n, err)
			}
			steps = append(steps, s)
			continue
		}
		_ = take("momento_evento", &s.EventTime) // passed through as written
		if err := take("llegada", &s.Arrival); err != nil {
			return nil, fmt.Errorf("line %d: llegada: %w", n, err)
		}
		_ = take("nota", &s.Note)
		if raw, ok := fields["pedido"]; ok {
			s.Order = raw
		} else {
			b, err := json.Marshal(fields)
			if err != nil {
				return nil, fmt.Errorf("line %d: %w", n, err)
			}
			s.Order = b
		}
		steps = append(steps, s)
	}
	return steps, sc.Err()
}

func ReadStepsFile(path string) ([]Step, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	steps, err := ReadSteps(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return steps, nil
}

func (s Step) attributes() map[string]string {
	if s.EventTime == "" {
		return map[string]string{}
	}
	return map[string]string{order.EventTimeAttribute: s.EventTime}
}

// Push delivers one order to the server's AggregateOrders as a Pub/Sub push
// subscription does: the wrapped envelope, base64 data, attributes.
func (srv Server) Push(ctx context.Context, s Step, publishTime time.Time) (stream.Result, error) {
	env := order.Delivery{
		Message: order.Message{
			Data:        s.Order, // []byte: base64 in JSON, as Pub/Sub sends it
			Attributes:  s.attributes(),
			MessageID:   rand.Text(),
			PublishTime: publishTime.UTC(),
		},
		Subscription: "projects/alpinashop-datos/subscriptions/pedidos-nuevos-push",
	}
	body, err := json.Marshal(env)
	if err != nil {
		return stream.Result{}, err
	}
	path := localapi.FunctionPath(localapi.AggregateOrders)
	resp, err := srv.send(ctx, http.MethodPost, path, bytes.NewReader(body))
	if err != nil {
		return stream.Result{}, err
	}
	defer resp.Body.Close()
	var out stream.Result
	if resp.StatusCode/100 != 2 {
		return out, fmt.Errorf("AggregateOrders answered HTTP %d: %s", resp.StatusCode, answerText(resp.Body, 1<<20))
	}
	_ = json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&out) // a dead letter's 204 has no body
	return out, nil
}

// PublishEmulator publishes steps' orders to topic pedidos-nuevos on the
// Pub/Sub emulator at host (PUBSUB_EMULATOR_HOST, which the client library
// reads itself), creating the topic if needed.
func PublishEmulator(ctx context.Context, host, project string, steps []Step) (int, error) {
	if host == "" {
		return 0, errors.New("PUBSUB_EMULATOR_HOST is not set")
	}
	// An emulator that is not there must fail the command, not hang it.
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	client, err := pubsub.NewClient(ctx, project)
	if err != nil {
		return 0, fmt.Errorf("pubsub client: %w", err)
	}
	defer client.Close()
	topic := "projects/" + project + "/topics/" + localapi.Topic
	if _, err := client.TopicAdminClient.CreateTopic(ctx, &pubsubpb.Topic{Name: topic}); err != nil && status.Code(err) != codes.AlreadyExists {
		return 0, fmt.Errorf("create topic %s: %w", topic, err)
	}
	pub := client.Publisher(topic)
	defer pub.Stop()
	var results []*pubsub.PublishResult
	for _, s := range steps {
		if !s.Tick.IsZero() {
			continue
		}
		results = append(results, pub.Publish(ctx, &pubsub.Message{Data: s.Order, Attributes: s.attributes()}))
	}
	for i, r := range results {
		if _, err := r.Get(ctx); err != nil {
			return i, fmt.Errorf("publish: %w", err)
		}
	}
	return len(results), nil
}

// Replay runs the window engine on the server, which holds the warehouse,
// over body's orders (JSONL) or q's source; q also holds the dates. Its
// errors are whole sentences starting "replay: ". Callers Ping first, so a
// failed request is a server that stopped answering mid-replay, not one
// that was never there; a refusal carries up to 16 KB of the server's words.
func (s Server) Replay(ctx context.Context, q url.Values, body io.Reader) (replay.Report, error) {
	req, err := s.request(ctx, http.MethodPost, localapi.ReplayPath+"?"+q.Encode(), body)
	if err != nil {
		return replay.Report{}, fmt.Errorf("replay: %w", err)
	}
	req.Header.Set("Content-Type", replay.ContentType)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return replay.Report{}, fmt.Errorf("replay: the server stopped answering: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return replay.Report{}, fmt.Errorf("replay: HTTP %d: %s", resp.StatusCode, answerText(resp.Body, 16<<10))
	}
	var rep replay.Report
	if err := json.NewDecoder(resp.Body).Decode(&rep); err != nil {
		return replay.Report{}, fmt.Errorf("replay: read the report: %w", err)
	}
	return rep, nil
}

// SetClock returns the time the server's clock then shows.
func (s Server) SetClock(ctx context.Context, t time.Time) (time.Time, error) {
	var out localapi.ClockAnswer
	_, err := s.do(ctx, http.MethodPost, localapi.ClockURL(t), nil, &out)
	return out.Now, err
}

// Tick calls AdvanceWatermark as Cloud Scheduler does (a plain POST).
func (s Server) Tick(ctx context.Context) (stream.TickResult, error) {
	var res stream.TickResult
	path := localapi.FunctionPath(localapi.AdvanceWatermark)
	_, err := s.do(ctx, http.MethodPost, path, strings.NewReader("{}"), &res)
	return res, err
}

func clip(b []byte, n int) string {
	r := []rune(string(b))
	if len(r) <= n {
		return string(r)
	}
	return string(r[:n]) + "…"
}
