// Package objectstest is the conformance suite of the objects adapters, run
// against the local fake in memory and on disk and against live Cloud
// Storage when configured, so that the fake is held to what production does.
package objectstest

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/base64"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"runtime"
	"runtime/metrics"
	"sync"
	"testing"
	"time"

	"github.com/alpinashop/alpipe/internal/objects"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// OldGenerations is what a read pinned to an overwritten generation returns.
type OldGenerations int

const (
	OldGenerationsEither  OldGenerations = iota // old bytes or ErrNotFound, never the new bytes
	OldGenerationsKept                          // the old bytes (Object Versioning)
	OldGenerationsDropped                       // ErrNotFound
)

// Features declares what a backend can do, where backends legitimately differ.
type Features struct {
	OldGenerations OldGenerations
	// MaxHeapGrowth, when > 0, bounds this process's heap growth while a
	// 50 MiB object streams back out through Open; the upload is not bounded,
	// since the local fake holds an upload in memory.
	MaxHeapGrowth uint64
}

// RunWithFeatures runs the suite against a backend with the given features.
// newStore is called once per subtest; objects are created under a prefix
// unique to the run and deleted afterwards, so a shared live bucket works.
func RunWithFeatures(t *testing.T, f Features, newStore func(t *testing.T) (store *objects.GCS, bucket string)) {
	root := fmt.Sprintf("objectstest/%d-%08x/", time.Now().UnixNano(), rand.Uint32())
	for _, tc := range []struct {
		name string
		run  func(t *testing.T, s *suite)
	}{
		{"RoundTrip", testRoundTrip},
		{"EmptyObject", testEmptyObject},
		{"AwkwardNames", testAwkwardNames},
		{"AbortLeavesNothing", testAbort},
		{"AbortKeepsPreviousGeneration", testAbortKeepsPrevious},
		{"CloseAndAbortOrder", testCloseAndAbortOrder},
		{"PinnedReadAfterOverwrite", testPinnedRead},
		{"Stat", testStat},
		{"Delete", testDelete},
		{"NotFound", testNotFound},
		{"ListByPrefix", testList},
		{"Stream50MiB", testStream},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store, bucket := newStore(t)
			s := &suite{store: store, bucket: bucket, prefix: root + tc.name + "/", features: f}
			t.Cleanup(func() { s.cleanup(t) })
			tc.run(t, s)
		})
	}
}

type suite struct {
	store    *objects.GCS
	bucket   string
	prefix   string
	features Features

	mu      sync.Mutex
	created []string
}

func (s *suite) name(n string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	full := s.prefix + n
	s.created = append(s.created, full)
	return full
}

func (s *suite) cleanup(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, n := range s.created {
		if err := s.store.Delete(ctx, s.bucket, n); err != nil {
			t.Logf("cleanup: %v", err)
		}
	}
}

func (s *suite) put(t *testing.T, name string, content []byte, meta map[string]string) objects.Attrs {
	t.Helper()
	w := s.store.Create(t.Context(), s.bucket, name, "text/csv; charset=utf-8", meta)
	if _, err := w.Write(content); err != nil {
		w.Abort()
		t.Fatalf("write %s: %v", name, err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("close %s: %v", name, err)
	}
	return w.Attrs()
}

func (s *suite) read(t *testing.T, name string, gen int64) ([]byte, error) {
	t.Helper()
	r, err := s.store.Open(t.Context(), s.bucket, name, gen)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}

func md5Of(b []byte) string {
	sum := md5.Sum(b)
	return base64.StdEncoding.EncodeToString(sum[:])
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// ignoreCreated leaves the server's clock out of comparisons; tests check
// it is set separately.
var ignoreCreated = cmpopts.IgnoreFields(objects.Attrs{}, "Created")

// wantAttrs is what a generation of content under name reports, but Created.
func (s *suite) wantAttrs(name string, gen int64, content []byte, meta map[string]string) objects.Attrs {
	return objects.Attrs{Bucket: s.bucket, Name: name, Generation: gen, Size: int64(len(content)),
		MD5: md5Of(content), CRC32C: crc32.Checksum(content, castagnoli), Metadata: meta}
}

func testRoundTrip(t *testing.T, s *suite) {
	name := s.name("exportaciones/2026/03/14/pedidos.csv")
	content := []byte("pedido_id,linea\r\nP-1,1\r\n")
	meta := map[string]string{"feed": "lineas_pedido", "origen": "ERP Müller"}
	got := s.put(t, name, content, meta)
	if diff := cmp.Diff(s.wantAttrs(name, got.Generation, content, meta), got, ignoreCreated); diff != "" {
		t.Errorf("writer Attrs (-want +got):\n%s", diff)
	}
	if got.Generation <= 0 {
		t.Errorf("Generation = %d, want > 0", got.Generation)
	}
	if got.Created.IsZero() {
		t.Error("Created is zero")
	}
	for _, gen := range []int64{got.Generation, 0} {
		b, err := s.read(t, name, gen)
		if err != nil {
			t.Fatalf("Open(generation %d): %v", gen, err)
		}
		if !bytes.Equal(b, content) {
			t.Errorf("Open(generation %d) = %q, want %q", gen, b, content)
		}
	}
}

func testEmptyObject(t *testing.T, s *suite) {
	name := s.name("empty.csv")
	w := s.store.Create(t.Context(), s.bucket, name, "text/csv", nil)
	if err := w.Close(); err != nil {
		t.Fatalf("Close without writes: %v", err)
	}
	got := w.Attrs()
	if diff := cmp.Diff(s.wantAttrs(name, got.Generation, nil, nil), got, ignoreCreated); diff != "" {
		t.Errorf("Attrs (-want +got):\n%s", diff)
	}
	b, err := s.read(t, name, got.Generation)
	if err != nil || len(b) != 0 {
		t.Errorf("Open = %q, %v; want empty, nil", b, err)
	}
}

// testAwkwardNames covers characters that need escaping in URL paths and
// queries, and non-ASCII names.
func testAwkwardNames(t *testing.T, s *suite) {
	for _, n := range []string{
		"con espacio/pedidos 2026.csv",
		"ñandú/opiniones-ç€.csv",
		"símbolos/a+b=c&d;e,f@g'h(i).csv",
		"percent/100%25 sure%.csv",
		"query/what?is#this.csv",
	} {
		name := s.name(n)
		content := []byte(n)
		a := s.put(t, name, content, nil)
		if a.Name != name {
			t.Errorf("Attrs.Name = %q, want %q", a.Name, name)
		}
		if b, err := s.read(t, name, a.Generation); err != nil || !bytes.Equal(b, content) {
			t.Errorf("Open(%q) = %q, %v; want %q", name, b, err, content)
		}
		st, err := s.store.Stat(t.Context(), s.bucket, name)
		if err != nil || st.Generation != a.Generation {
			t.Errorf("Stat(%q) = generation %d, %v; want %d", name, st.Generation, err, a.Generation)
		}
	}
}

func testAbort(t *testing.T, s *suite) {
	for _, tc := range []struct {
		name string
		size int
	}{
		{name: "nothing written", size: 0},
		{name: "small", size: 10 << 10},
		// Larger than the default chunk: part of it has reached the server.
		{name: "past the first chunk", size: objects.DefaultChunkSize + 1<<20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name := s.name("abort/" + tc.name + ".csv")
			w := s.store.Create(t.Context(), s.bucket, name, "text/csv", nil)
			if _, err := io.Copy(w, io.LimitReader(NewGenerator(1), int64(tc.size))); err != nil {
				t.Fatalf("write: %v", err)
			}
			w.Abort()
			if err := w.Close(); err == nil {
				t.Error("Close after Abort = nil, want an error")
			}
			if _, err := s.store.Stat(t.Context(), s.bucket, name); !errors.Is(err, objects.ErrNotFound) {
				t.Errorf("Stat after Abort = %v, want ErrNotFound", err)
			}
			for a, err := range s.store.List(t.Context(), s.bucket, name) {
				t.Errorf("List after Abort yielded %+v, %v; want nothing", a, err)
			}
		})
	}
}

func testAbortKeepsPrevious(t *testing.T, s *suite) {
	name := s.name("keep.csv")
	first := s.put(t, name, []byte("v1"), nil)
	w := s.store.Create(t.Context(), s.bucket, name, "text/csv", nil)
	if _, err := w.Write([]byte("v2 never lands")); err != nil {
		t.Fatalf("write: %v", err)
	}
	w.Abort()
	if st, err := s.store.Stat(t.Context(), s.bucket, name); err != nil || st.Generation != first.Generation {
		t.Errorf("live generation after Abort = %d, %v; want %d", st.Generation, err, first.Generation)
	}
	if b, err := s.read(t, name, 0); err != nil || string(b) != "v1" {
		t.Errorf("Open = %q, %v; want v1", b, err)
	}
}

func testCloseAndAbortOrder(t *testing.T, s *suite) {
	name := s.name("order.csv")
	w := s.store.Create(t.Context(), s.bucket, name, "text/csv", nil)
	if _, err := w.Write([]byte("kept")); err != nil {
		t.Fatalf("write: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	w.Abort() // deferred aborts run after a successful Close: must be harmless
	if err := w.Close(); err != nil {
		t.Errorf("second Close = %v, want nil", err)
	}
	if b, err := s.read(t, name, 0); err != nil || string(b) != "kept" {
		t.Errorf("Open after Close+Abort = %q, %v; want kept", b, err)
	}
}

func testPinnedRead(t *testing.T, s *suite) {
	name := s.name("overwrite.csv")
	v1 := s.put(t, name, []byte("version one"), nil)
	v2 := s.put(t, name, []byte("version two"), nil)
	if v2.Generation <= v1.Generation {
		t.Fatalf("overwrite generation %d not after %d", v2.Generation, v1.Generation)
	}
	for _, gen := range []int64{0, v2.Generation} {
		if b, err := s.read(t, name, gen); err != nil || string(b) != "version two" {
			t.Errorf("Open(generation %d) = %q, %v; want version two", gen, b, err)
		}
	}
	b, err := s.read(t, name, v1.Generation)
	switch {
	case err == nil && string(b) == "version one":
		t.Logf("old generation %d kept: read returns its bytes", v1.Generation)
		if s.features.OldGenerations == OldGenerationsDropped {
			t.Errorf("old generation readable, but the backend declares it drops them")
		}
	case errors.Is(err, objects.ErrNotFound):
		t.Logf("old generation %d dropped: read returns ErrNotFound", v1.Generation)
		if s.features.OldGenerations == OldGenerationsKept {
			t.Errorf("Open(old generation) = %v, but the backend declares it keeps them", err)
		}
	default:
		t.Errorf("Open(old generation %d) = %q, %v; want its own bytes or ErrNotFound, never another generation's", v1.Generation, b, err)
	}
}

func testStat(t *testing.T, s *suite) {
	name := s.name("stat.csv")
	content := bytes.Repeat([]byte("pedido,1,2026-03-14,SKU-1,2,\"89,90\",C1,ES\n"), 1000)
	meta := map[string]string{"source-generation": "1742000000000000"}
	w := s.put(t, name, content, meta)
	got, err := s.store.Stat(t.Context(), s.bucket, name)
	if err != nil {
		t.Fatalf("Stat: %v", err)
	}
	if diff := cmp.Diff(s.wantAttrs(name, w.Generation, content, meta), got, ignoreCreated); diff != "" {
		t.Errorf("Stat (-want +got):\n%s", diff)
	}
	if d := got.Created.Sub(w.Created); d < -time.Second || d > time.Second {
		t.Errorf("Stat Created %v, writer said %v", got.Created, w.Created)
	}
}

func testDelete(t *testing.T, s *suite) {
	name := s.name("delete.csv")
	s.put(t, name, []byte("x"), nil)
	if err := s.store.Delete(t.Context(), s.bucket, name); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if _, err := s.store.Stat(t.Context(), s.bucket, name); !errors.Is(err, objects.ErrNotFound) {
		t.Errorf("Stat after Delete = %v, want ErrNotFound", err)
	}
	if _, err := s.read(t, name, 0); !errors.Is(err, objects.ErrNotFound) {
		t.Errorf("Open after Delete = %v, want ErrNotFound", err)
	}
	if err := s.store.Delete(t.Context(), s.bucket, name); err != nil {
		t.Errorf("second Delete = %v, want nil", err)
	}
}

func testNotFound(t *testing.T, s *suite) {
	missing := s.name("missing.csv")
	existing := s.name("present.csv")
	a := s.put(t, existing, []byte("here"), nil)
	for _, tc := range []struct {
		name string
		call func() error
	}{
		{"Open missing object", func() error { _, err := s.read(t, missing, 0); return err }},
		{"Open missing object at a generation", func() error { _, err := s.read(t, missing, 42); return err }},
		{"Open generation that never existed", func() error { _, err := s.read(t, existing, a.Generation+1); return err }},
		{"Stat missing object", func() error { _, err := s.store.Stat(t.Context(), s.bucket, missing); return err }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			if !errors.Is(err, objects.ErrNotFound) {
				t.Fatalf("err = %v, want one wrapping ErrNotFound", err)
			}
			if want := missing; tc.name != "Open generation that never existed" && !bytes.Contains([]byte(err.Error()), []byte(want)) {
				t.Errorf("error %q does not name the object %q", err, want)
			}
		})
	}
	if err := s.store.Delete(t.Context(), s.bucket, missing); err != nil {
		t.Errorf("Delete missing = %v, want nil", err)
	}
}

func testList(t *testing.T, s *suite) {
	names := []string{"p/b/d.csv", "p/a.csv", "q/x.csv", "p/b/c.csv", "pz.csv"}
	attrs := map[string]objects.Attrs{}
	for _, n := range names {
		full := s.name(n)
		attrs[full] = s.put(t, full, []byte(n), map[string]string{"n": n})
	}
	for _, tc := range []struct {
		name   string
		prefix string
		want   []string
	}{
		{name: "folder", prefix: "p/", want: []string{"p/a.csv", "p/b/c.csv", "p/b/d.csv"}},
		{name: "subfolder", prefix: "p/b/", want: []string{"p/b/c.csv", "p/b/d.csv"}},
		{name: "partial name", prefix: "p", want: []string{"p/a.csv", "p/b/c.csv", "p/b/d.csv", "pz.csv"}},
		{name: "no match", prefix: "nothing/", want: nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var want []objects.Attrs
			for _, n := range tc.want {
				want = append(want, attrs[s.prefix+n])
			}
			var got []objects.Attrs
			for a, err := range s.store.List(t.Context(), s.bucket, s.prefix+tc.prefix) {
				if err != nil {
					t.Fatalf("List: %v", err)
				}
				got = append(got, a)
			}
			if diff := cmp.Diff(want, got, ignoreCreated); diff != "" {
				t.Errorf("List(%q) (-want +got):\n%s", tc.prefix, diff)
			}
		})
	}
	t.Run("stop early", func(t *testing.T) {
		n := 0
		for range s.store.List(t.Context(), s.bucket, s.prefix) {
			n++
			break
		}
		if n != 1 {
			t.Errorf("iterations = %d, want 1", n)
		}
	})
}

const streamSize = 50 << 20

// testStream pushes 50 MiB from a generator through Create and back through
// Open, hashing on the fly: any buffering is the adapter's or the backend's.
func testStream(t *testing.T, s *suite) {
	name := s.name("big/50MiB.csv")
	ctx := t.Context()
	peak := WatchHeap(t)

	upHash := md5.New()
	w := s.store.Create(ctx, s.bucket, name, "text/csv", nil)
	n, err := io.Copy(w, io.TeeReader(io.LimitReader(NewGenerator(7), streamSize), upHash))
	if err != nil {
		w.Abort()
		t.Fatalf("upload after %d bytes: %v", n, err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	a := w.Attrs()
	wantMD5 := base64.StdEncoding.EncodeToString(upHash.Sum(nil))
	if a.Size != streamSize || a.MD5 != wantMD5 {
		t.Errorf("Attrs size %d md5 %s, want %d %s", a.Size, a.MD5, streamSize, wantMD5)
	}

	up := peak()
	runtime.GC() // the upload's garbage is not the download's
	peak = WatchHeap(t)
	r, err := s.store.Open(ctx, s.bucket, name, a.Generation)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	downHash := md5.New()
	n, err = io.Copy(downHash, r)
	r.Close()
	if err != nil || n != streamSize {
		t.Fatalf("download: %d bytes, %v; want %d", n, err, streamSize)
	}
	if got := base64.StdEncoding.EncodeToString(downHash.Sum(nil)); got != wantMD5 {
		t.Errorf("downloaded md5 %s, want %s", got, wantMD5)
	}

	down := peak()
	t.Logf("heap growth while streaming 50 MiB in: %.1f MiB, out: %.1f MiB", float64(up)/(1<<20), float64(down)/(1<<20))
	if max := s.features.MaxHeapGrowth; max > 0 && down > max {
		t.Errorf("heap grew by %.1f MiB while reading, more than %.1f MiB: something holds the object in memory",
			float64(down)/(1<<20), float64(max)/(1<<20))
	}
}

// NewGenerator yields a reproducible endless stream of CSV-ish bytes
// without materialising it.
func NewGenerator(seed uint64) io.Reader {
	return &generator{rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
}

type generator struct{ rng *rand.Rand }

func (g *generator) Read(p []byte) (int, error) {
	const alphabet = "0123456789ABCDEFGHIJKLMNOPQRS,\"\n" // 32 symbols: 5 bits each
	for i := 0; i < len(p); {
		v := g.rng.Uint64()
		for j := 0; j < 12 && i < len(p); j, i = j+1, i+1 {
			p[i] = alphabet[v&31]
			v >>= 5
		}
	}
	return len(p), nil
}

// WatchHeap samples the heap until the returned function is called or the
// test ends; that function returns the peak growth over the start.
func WatchHeap(t testing.TB) func() uint64 {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 { metrics.Read(sample); return sample[0].Value.Uint64() }
	base := read()
	var peak uint64
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			peak = max(peak, read())
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	finish := sync.OnceValue(func() uint64 { close(stop); <-done; return max(peak, base) - base })
	t.Cleanup(func() { finish() })
	return finish
}
