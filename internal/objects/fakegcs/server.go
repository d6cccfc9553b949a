// Package fakegcs is an in-process fake of Cloud Storage for tests and the
// local CLI: fake-gcs-server's fakestorage, with uploads streamed to disk.
// The real client library talks to it over HTTP, so the production adapter
// (objects.GCS) runs unchanged against it. It lives apart from the adapter
// so that the production binary links neither the fake nor its
// dependencies (cmd/server's deps_test checks).
package fakegcs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"time"

	"cloud.google.com/go/storage"
	"github.com/fsouza/fake-gcs-server/fakestorage"
	"google.golang.org/api/option"

	"github.com/alpinashop/alpipe/internal/objects/objname"
)

// Server is an in-process fake Cloud Storage (fake-gcs-server's fakestorage)
// that the real client library talks to over HTTP, in process (Client) or
// through whatever server mounts Handler.
//
// With a folder, object bytes live on disk under <dir>/buckets in the fake's
// filesystem layout, and in-progress uploads under <dir>/uploads.
// Downloads stream through the fake: its filesystem backend opens the file
// and io.Copy's it to the response. Uploads would not: the fake holds every
// upload whole in memory, in several copies (300 MiB of heap for a 40 MB
// file), so Server answers the upload endpoint itself and streams the body to
// disk (see streamingUploads); the server side of a drop then needs 1 MiB of
// copy buffers whatever the file size.
// The filesystem backend keeps only the live generation: a read pinned to an
// overwritten generation gets objects.ErrNotFound, as on a bucket without
// Object Versioning.
//
// Without a folder (tests), the fake's memory backend holds objects and its
// own upload code runs; its buckets have versioning on, so overwritten
// generations stay readable by number, as on a versioned bucket.
type Server struct {
	fake    *fakestorage.Server
	uploads *streamingUploads // nil for the memory backend
	memory  bool
	buckets map[string]bool // the only buckets served; fixed at Start
	handler http.Handler
	server  *http.Server // only after Listen
	url     string
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
	var uploads *streamingUploads
	if dir != "" {
		root := filepath.Join(dir, "buckets")
		fs, err := newFakeFS(root)
		if err != nil {
			return nil, fmt.Errorf("local storage folder: %w", err)
		}
		uploads, err = newStreamingUploads(fs, filepath.Join(dir, "uploads"))
		if err != nil {
			return nil, fmt.Errorf("local storage folder: %w", err)
		}
		opts.StorageRoot = root
	}
	fake, err := fakestorage.NewServerWithOptions(opts)
	if err != nil {
		return nil, fmt.Errorf("start fake storage: %w", err)
	}
	l := &Server{fake: fake, uploads: uploads, memory: dir == "", buckets: map[string]bool{}}
	l.handler = http.HandlerFunc(l.guard)
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
	l.fake.CreateBucketWithOpts(fakestorage.CreateBucketOpts{Name: name, VersioningEnabled: l.uploads == nil})
	return nil
}

// serve passes a request the guard let through to the upload code or the
// fake.
func (l *Server) serve(w http.ResponseWriter, r *http.Request) {
	if _, ok := uploadBucket(r.URL.Path); ok {
		if l.uploads != nil {
			l.uploads.ServeHTTP(w, r)
			return
		}
		if l.memory && !l.wholeBody(w, r) {
			return
		}
	}
	l.fake.HTTPHandler().ServeHTTP(w, r)
}

// wholeBody reads an upload request to its end before the memory backend
// sees it, and answers 400 to one that did not end (413 to a gzip body past
// its bound, inflate.go). The fake stores a
// multipart upload once it has parsed the closing boundary, which an aborted
// single-shot upload still sends (see streamingUploads.multipart); only the
// end of the request body tells a finished upload from an aborted one. The
// memory backend holds every upload whole anyway.
//
// The body is also where a multipart or resumable upload names its object,
// so the name is checked here, as the streaming uploads check theirs.
func (l *Server) wholeBody(w http.ResponseWriter, r *http.Request) bool {
	b, err := io.ReadAll(r.Body)
	if err != nil {
		apiError(w, receiveStatus(err), "upload: read body: "+err.Error())
		return false
	}
	r.Body = io.NopCloser(bytes.NewReader(b))
	if name, ok := bodyName(r, b); ok {
		if err := l.checkObject(name); err != nil {
			apiError(w, http.StatusBadRequest, err.Error())
			return false
		}
	}
	return true
}

// Handler serves the fake, to mount under Paths on another server (the
// CLI's serve mounts it beside the functions, behind its guard). It is the
// only way in: it answers only the routes the client library uses, checks
// every bucket and object name, and sends no CORS headers (guard.go).
func (l *Server) Handler() http.Handler { return l.handler }

// Client returns a real storage client that reaches Handler in process,
// through an in-memory transport (transport.go): no socket is opened, and
// uploads and downloads stream as they would over one.
func (l *Server) Client(ctx context.Context) (*storage.Client, error) {
	c, err := storage.NewClient(ctx,
		option.WithEndpoint("http://"+inMemoryHost+"/storage/v1/"),
		option.WithHTTPClient(&http.Client{Transport: handlerTransport{h: l.handler}}),
		storage.WithJSONReads(),
	)
	if err != nil {
		return nil, fmt.Errorf("storage client for the local fake: %w", err)
	}
	return c, nil
}

// Close stops the test listener, if any, and discards unfinished uploads.
// Stored objects stay in the folder.
func (l *Server) Close() {
	if l.server != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		if err := l.server.Shutdown(ctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
			_ = l.server.Close()
		}
		cancel()
	}
	l.fake.Stop()
	if l.uploads != nil {
		l.uploads.close()
	}
}
