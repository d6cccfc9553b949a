package stack

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/alpinashop/alpipe/test/tfconfig"
)

// Backoff is Eventarc's retry schedule for a failed delivery, in real time:
// Eventarc waits Min after the first failure, doubles the wait up to Max,
// and gives the event up GiveUp after its first attempt. On Google Cloud
// that is 10 s, 600 s and 24 h; DefaultBackoff is 1000 times faster.
type Backoff struct {
	Min, Max, GiveUp time.Duration
}

var DefaultBackoff = Backoff{Min: 10 * time.Millisecond, Max: 600 * time.Millisecond, GiveUp: 86400 * time.Millisecond}

// Eventarc delivers google.cloud.storage.object.v1.finalized events of one
// trigger to its service as Eventarc does: binary-mode CloudEvents, at
// least once, retried on any non-2xx.
type Eventarc struct {
	trigger  tfconfig.StorageTrigger
	target   *Frontend
	audience string
	backoff  Backoff

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	changed chan struct{}
	events  map[string]*Event // by object key gs://bucket/name#generation
}

// Event is one finalize event and what became of it.
type Event struct {
	ID, Bucket, Name string
	Gen              int64
	Data             []byte // StorageObjectData JSON
	Time             string // ce-time
	Attempts         []int  // the status of each delivery (0: no answer)
	Acked, GaveUp    bool
}

func objectKey(bucket, name string, gen int64) string {
	return "gs://" + bucket + "/" + name + "#" + strconv.FormatInt(gen, 10)
}

func newEventarc(t tfconfig.StorageTrigger, target *Frontend, audience string, b Backoff) *Eventarc {
	ctx, cancel := context.WithCancel(context.Background())
	return &Eventarc{
		trigger: t, target: target, audience: audience, backoff: b,
		ctx: ctx, cancel: cancel,
		changed: make(chan struct{}),
		events:  map[string]*Event{},
	}
}

// Close stops every delivery in progress.
func (e *Eventarc) Close() {
	e.cancel()
	e.wg.Wait()
}

// finalized is called by the storage hook for every new object generation.
func (e *Eventarc) finalized(obj map[string]any) {
	bucket, _ := obj["bucket"].(string)
	if bucket != e.trigger.Bucket {
		return
	}
	name, _ := obj["name"].(string)
	gen, err := strconv.ParseInt(fmt.Sprint(obj["generation"]), 10, 64)
	if err != nil || name == "" {
		return
	}
	data, _ := json.Marshal(storageObjectData(obj))
	ev := &Event{ID: eventID(), Bucket: bucket, Name: name, Gen: gen, Data: data, Time: ceTime(obj)}
	e.mu.Lock()
	e.events[objectKey(bucket, name, gen)] = ev
	close(e.changed)
	e.changed = make(chan struct{})
	e.mu.Unlock()
	e.wg.Go(func() { e.deliver(ev) })
}

// storageObjectData is the object resource as Eventarc's StorageObjectData
// carries it: the JSON API's object fields, int64 values as strings.
func storageObjectData(obj map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range obj {
		switch k {
		case "acl", "owner":
			continue
		case "generation", "metageneration", "size":
			out[k] = fmt.Sprint(v)
		default:
			out[k] = v
		}
	}
	out["kind"] = "storage#object"
	return out
}

func ceTime(obj map[string]any) string {
	for _, k := range []string{"updated", "timeCreated"} {
		if s, ok := obj[k].(string); ok && s != "" {
			return s
		}
	}
	return time.Now().UTC().Format(time.RFC3339Nano)
}

// eventID is shaped like the IDs Eventarc gives storage events (the
// notification's Pub/Sub message ID): a long decimal number.
func eventID() string {
	n, _ := rand.Int(rand.Reader, big.NewInt(9e15))
	return strconv.FormatInt(n.Int64()+1e15, 10)
}

// deliver sends the event until it is acknowledged or given up.
func (e *Eventarc) deliver(ev *Event) {
	first := time.Now()
	wait := e.backoff.Min
	for {
		status := e.send(ev)
		e.mu.Lock()
		ev.Attempts = append(ev.Attempts, status)
		ev.Acked = status/100 == 2
		if !ev.Acked && time.Since(first)+wait > e.backoff.GiveUp {
			ev.GaveUp = true
		}
		done := ev.Acked || ev.GaveUp
		close(e.changed)
		e.changed = make(chan struct{})
		e.mu.Unlock()
		if done {
			return
		}
		select {
		case <-time.After(wait):
		case <-e.ctx.Done():
			return
		}
		wait = min(2*wait, e.backoff.Max)
	}
}

// send makes one delivery and returns its status (0: no answer).
func (e *Eventarc) send(ev *Event) int {
	h := http.Header{}
	h.Set("Ce-Id", ev.ID)
	h.Set("Ce-Source", "//storage.googleapis.com/projects/_/buckets/"+ev.Bucket)
	h.Set("Ce-Subject", "objects/"+ev.Name)
	h.Set("Ce-Type", e.trigger.EventType)
	h.Set("Ce-Specversion", "1.0")
	h.Set("Ce-Time", ev.Time)
	h.Set("Ce-Bucket", ev.Bucket)
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("Authorization", "Bearer "+idToken(e.audience, e.trigger.ServiceAccountEmail, time.Now()))
	h.Set("User-Agent", "APIs-Google; (+https://developers.google.com/webmasters/APIs-Google.html)")
	h.Set("From", "noreply@google.com")
	status, _, _ := send(e.ctx, "event "+ev.ID, e.target.proc.Service.Timeout,
		http.MethodPost, e.target.URL()+"/", ev.Data, h)
	return status
}

// Redeliver sends an event once more, as Eventarc may at any time (at
// least once), and returns the status. The event keeps its ID.
func (e *Eventarc) Redeliver(bucket, name string, gen int64) (int, error) {
	e.mu.Lock()
	ev, ok := e.events[objectKey(bucket, name, gen)]
	e.mu.Unlock()
	if !ok {
		return 0, fmt.Errorf("no event for %s", objectKey(bucket, name, gen))
	}
	return e.send(ev), nil
}

// Wait waits until the event of an object generation is acknowledged or
// given up, and returns it.
func (e *Eventarc) Wait(ctx context.Context, bucket, name string, gen int64, timeout time.Duration) (Event, error) {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	key := objectKey(bucket, name, gen)
	for {
		e.mu.Lock()
		ev, ok := e.events[key]
		var snap Event
		if ok {
			snap = *ev
			snap.Attempts = append([]int(nil), ev.Attempts...)
		}
		changed := e.changed
		e.mu.Unlock()
		if ok && (snap.Acked || snap.GaveUp) {
			return snap, nil
		}
		select {
		case <-changed:
		case <-timer.C:
			return snap, fmt.Errorf("event of %s not acknowledged within %s (statuses so far: %v)", key, timeout, snap.Attempts)
		case <-ctx.Done():
			return snap, ctx.Err()
		}
	}
}

// storageHook wraps the fake GCS: every upload that creates an object
// generation is reported to onObject, as Cloud Storage notifies Eventarc.
func storageHook(next http.Handler, onObject func(map[string]any)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, "/upload/") || (r.Method != http.MethodPost && r.Method != http.MethodPut) {
			next.ServeHTTP(w, r)
			return
		}
		cw := &captureWriter{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(cw, r)
		if cw.status/100 != 2 {
			return
		}
		var obj map[string]any
		if json.Unmarshal(cw.body.Bytes(), &obj) != nil || obj["bucket"] == nil || obj["generation"] == nil {
			return // an unfinished resumable upload answers without an object
		}
		onObject(obj)
	})
}

type captureWriter struct {
	http.ResponseWriter
	status int
	body   bytes.Buffer
}

func (c *captureWriter) WriteHeader(code int) {
	c.status = code
	c.ResponseWriter.WriteHeader(code)
}

func (c *captureWriter) Write(b []byte) (int, error) {
	c.body.Write(b)
	return c.ResponseWriter.Write(b)
}
