// Package fakegcs is an in-process fake of Cloud Storage for tests and the
// local CLI: fake-gcs-server's fakestorage behind a guard, with its own
// upload handling. The real client library talks to it over HTTP, so the
// production adapter (objects.GCS) runs unchanged against it; it lives apart
// so that the production binary links no fake (cmd/server's deps_test).
//
// What fake-gcs-server (v1.56.1) lacks, and so what stays here:
//   - guard.go: only the routes the client library uses, every name checked
//     (its filesystem backend joins names into paths unchecked), no CORS.
//   - uploads.go, inflate.go: bounds on bodies, gzip inflation and
//     resumable sessions, and whole-or-nothing requests (it commits a cut
//     multipart upload and appends resumable chunks unchecked).
//   - transport.go: an in-process client that streams.
//   - server.go: a 409 for names a folder tree cannot hold beside another
//     ("a" and "a/b.csv"), and a repair at Start of writes cut by a crash.
//
// An upload is held in memory in several copies (about ten times the object
// at peak, BenchmarkLocalRoundTrip), hence maxObjectBytes; downloads stream.
package fakegcs

import (
	"context"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"cloud.google.com/go/storage"
	"github.com/fsouza/fake-gcs-server/fakestorage"
	"google.golang.org/api/option"

	"github.com/alpinashop/alpipe/internal/objects/objname"
)

// Server is the fake, reached in process (Client) or through Handler.
// With a folder it keeps objects as files under <dir>/buckets and only the
// live generation (as a bucket without Object Versioning); without one
// (tests) it holds versioned buckets in memory.
type Server struct {
	fake     *fakestorage.Server
	root     string          // the filesystem backend's folder; "" for the memory backend
	buckets  map[string]bool // the only buckets served; fixed at Start
	sessions sessions
	handler  http.Handler
	inproc   *inProcess
}

// Paths are the URL path prefixes the Go client library uses against an
// emulator host, for a server that mounts Handler beside other routes.
func Paths() []string {
	return []string{"/storage/v1/", "/upload/storage/v1/", "/download/storage/v1/"}
}

// Start starts the fake and creates the buckets; dir "" selects the memory
// backend. The fake does not listen: mount Handler, or use Client.
func Start(dir string, buckets ...string) (*Server, error) {
	opts := fakestorage.Options{NoListener: true, Scheme: "http"}
	l := &Server{buckets: map[string]bool{}, sessions: sessions{byID: map[string]*session{}, maxOpen: defaultMaxSessions, maxHeld: defaultMaxHeldBytes}}
	if dir != "" {
		l.root = filepath.Join(dir, "buckets")
		opts.StorageRoot = l.root
	}
	fake, err := fakestorage.NewServerWithOptions(opts)
	if err != nil {
		return nil, fmt.Errorf("start fake storage: %w", err)
	}
	l.fake = fake
	if err := l.sweepPartial(); err != nil {
		l.fake.Stop()
		return nil, fmt.Errorf("local storage folder: %w", err)
	}
	l.handler = http.HandlerFunc(l.guard)
	l.inproc = serveInProcess(l.handler)
	for _, b := range buckets {
		err := objname.Bucket(b)
		if err == nil {
			err = l.createBucket(b)
		}
		if err != nil {
			l.Close()
			return nil, err
		}
		l.buckets[b] = true
	}
	return l, nil
}

// createBucket turns the fake's panic on a backend error into an error.
func (l *Server) createBucket(name string) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("create bucket %s: %v", name, r)
		}
	}()
	// The filesystem backend refuses versioning.
	l.fake.CreateBucketWithOpts(fakestorage.CreateBucketOpts{Name: name, VersioningEnabled: l.root == ""})
	return nil
}

// sweepPartial removes what a write interrupted by the process's end leaves
// in the bucket folders: the filesystem backend writes each file through a
// temporary one, "." + name + digits, and a file without attributes there
// makes every listing of its bucket answer 404.
func (l *Server) sweepPartial() error {
	if l.root == "" {
		return nil
	}
	return filepath.WalkDir(l.root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if n := d.Name(); !d.Type().IsRegular() || n[0] != '.' || n[len(n)-1] < '0' || n[len(n)-1] > '9' {
			return nil
		}
		rel, _ := filepath.Rel(l.root, path)
		bucket, name, _ := strings.Cut(filepath.ToSlash(rel), "/")
		if b, err := url.PathUnescape(bucket); err == nil && name != "" {
			if o, err := l.fake.GetObjectStreaming(b, name); err == nil {
				return o.Close()
			}
		}
		return os.Remove(path)
	})
}

// Handler serves the fake under Paths; it is the only way in (guard.go).
func (l *Server) Handler() http.Handler { return l.handler }

// Client returns a real storage client that reaches Handler over in-memory
// connections (transport.go): no socket is opened.
func (l *Server) Client(ctx context.Context) (*storage.Client, error) {
	c, err := storage.NewClient(ctx,
		option.WithEndpoint("http://"+inMemoryHost+"/storage/v1/"),
		option.WithHTTPClient(&http.Client{Transport: l.inproc.transport}),
		storage.WithJSONReads(),
	)
	if err != nil {
		return nil, fmt.Errorf("storage client for the local fake: %w", err)
	}
	return c, nil
}

// Close stops the in-process server and discards unfinished uploads.
// Stored objects stay in the folder.
func (l *Server) Close() {
	if l.inproc != nil {
		l.inproc.stop()
	}
	l.fake.Stop()
	l.sessions.close()
}

// checkObject is the rule for one object name: what a folder tree can hold.
// The memory backend also holds a console's folder placeholder "a/b/", as
// Cloud Storage does, so code that skips them can be tested. A name ending
// in .metadata could overwrite another object's attributes on disk.
func (l *Server) checkObject(name string) error {
	check := name
	if l.root == "" && strings.HasSuffix(name, "/") && len(name) > 1 {
		check = strings.TrimSuffix(name, "/")
	}
	if err := objname.Local(check); err != nil || l.root == "" {
		return err
	}
	switch {
	case strings.HasSuffix(name, ".metadata"):
		return fmt.Errorf("object name %q: names ending in .metadata are reserved by the local storage fake", name)
	case !objname.Fits(name):
		return fmt.Errorf("object name %q has a segment longer than %d bytes, the longest file name the local storage fake can store it as",
			name, objname.MaxSegmentBytes)
	}
	return nil
}

// fileConflict says why the filesystem backend cannot store name as a file:
// Cloud Storage holds "a" beside "a/b.csv", a folder tree cannot (the fake
// answers 500).
func (l *Server) fileConflict(bucket, name string) error {
	if l.root == "" {
		return nil
	}
	dir := filepath.Join(l.root, url.PathEscape(bucket))
	path := filepath.Join(dir, filepath.FromSlash(name))
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return fmt.Errorf("object name %q is the folder of other objects (%s/...) in the local storage fake, which keeps objects as files: one name cannot be both", name, name)
	}
	for p := filepath.Dir(path); len(p) > len(dir) && strings.HasPrefix(p, dir+string(filepath.Separator)); p = filepath.Dir(p) {
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			return fmt.Errorf("object name %q needs %q as a folder, but it is an object in the local storage fake, which keeps objects as files", name, filepath.ToSlash(rel))
		}
	}
	return nil
}
