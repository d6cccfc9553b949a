// Package fakegcs is an in-process fake of Cloud Storage for tests and the
// local CLI: fake-gcs-server's fakestorage, with its own backends and its
// own upload handling, behind a guard. The real client library talks to it
// over HTTP, so the production adapter (objects.GCS) runs unchanged against
// it. It lives apart from the adapter so that the production binary links
// neither the fake nor its dependencies (cmd/server's deps_test checks).
//
// What fake-gcs-server (v1.56.1, read from its source) lacks, and so what
// stays here:
//
//   - A door that lets in only what the client library uses (guard.go). Its
//     router also serves /_internal/delete_all, reseed and config, a batch
//     endpoint that carries any request, the XML API routed by Host, ACLs,
//     notifications and bucket creation; its CORS middleware answers every
//     origin; its filesystem backend joins bucket and object names into
//     paths unchecked ("../" writes outside the bucket folder), and a
//     resumable upload's JSON body may name another bucket than its URL.
//   - Bounds (uploads.go, inflate.go). It inflates a gzip request body
//     without limit, reads every upload whole into memory without limit,
//     and keeps a resumable session, with every byte received, until it is
//     finalized: a cancelled (DELETE) or abandoned session is never dropped.
//   - Whole-or-nothing requests (uploads.go). It commits a multipart upload
//     once it has parsed the closing boundary, which an aborted upload still
//     sends before its body fails; it appends a resumable chunk as received,
//     so a chunk cut short or re-sent after a lost answer corrupts the
//     object; it finalizes on a status query ("bytes */*"), drops declared
//     checksums after the first chunk, and answers a retried finalize 404.
//   - An in-process client that streams (transport.go): its own
//     (NoListener) records each answer whole before returning it.
//   - Folder-tree limits said plainly (server.go): a 409 for a name the
//     tree cannot hold beside another ("a" and "a/b.csv"), which its
//     filesystem backend answers with a 500, and one segment length on
//     every file system (objname.MaxSegmentBytes); and a repair at Start of what a
//     write cut by the process's end leaves, after which every listing of
//     the bucket answers 404.
//
// The fake holds an upload in memory, in several copies, while it stores
// it: the heap grows by about ten times the object at peak, 90-110 MiB for
// the daily ERP export of 8.6 MB (BenchmarkLocalRoundTrip). Uploads are
// bounded accordingly (maxObjectBytes, 64 MiB). Downloads stream: the
// filesystem backend opens the file and io.Copy's it to the answer.
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

// Server is an in-process fake Cloud Storage that the real client library
// talks to over HTTP, in process (Client) or through whatever server mounts
// Handler.
//
// With a folder, the fake's filesystem backend keeps objects under
// <dir>/buckets (its layout: a file per object, attributes in an extended
// attribute or a "<name>.metadata" file). It keeps only the live
// generation: a read pinned to an overwritten generation gets
// objects.ErrNotFound, as on a bucket without Object Versioning. Without a
// folder (tests), the memory backend holds objects in versioned buckets, so
// overwritten generations stay readable by number.
type Server struct {
	fake     *fakestorage.Server
	root     string          // the filesystem backend's folder; "" for the memory backend
	buckets  map[string]bool // the only buckets served; fixed at Start
	sessions sessions
	handler  http.Handler
	inproc   *inProcess
}

// Paths are the URL path prefixes (subtree patterns) that the Go client
// library uses against an emulator host, for a server that mounts Handler
// beside other routes: the JSON API (metadata, list, delete and, with JSON
// reads, downloads as ?alt=media), the upload endpoint (including resumable
// session URLs, which the fake hands out under the same prefix), and the
// download endpoint that objects' mediaLink points to.
func Paths() []string {
	return []string{"/storage/v1/", "/upload/storage/v1/", "/download/storage/v1/"}
}

// Start starts the fake and creates the buckets. dir "" selects the memory
// backend. The fake does not listen: mount Handler on a server (the CLI's
// serve does, behind its guard) and use Client for in-process access.
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
		if err := objname.Bucket(b); err != nil {
			l.Close()
			return nil, err
		}
		if err := l.createBucket(b); err != nil {
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

// Handler serves the fake, to mount under Paths on another server (the
// CLI's serve mounts it beside the functions, behind its guard). It is the
// only way in: it answers only the routes the client library uses, checks
// every bucket and object name, and sends no CORS headers (guard.go).
func (l *Server) Handler() http.Handler { return l.handler }

// Client returns a real storage client that reaches Handler in process,
// over in-memory connections (transport.go): no socket is opened, and
// uploads and downloads stream as they would over one.
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

// checkObject is the rule for one object name on this server: what a
// folder tree can hold faithfully. The memory backend (tests) also holds a
// console's folder placeholder "a/b/", as Cloud Storage does, so that code
// meeting one in production (the backfill skips them) can be tested. The
// filesystem backend's limits are the same on every file system: a segment
// of at most objname.MaxSegmentBytes, and no name ending in .metadata, which
// could overwrite another object's attributes where there are no extended
// attributes.
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
