package fakegcs

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"cloud.google.com/go/storage"
	"github.com/pkg/xattr"

	"github.com/alpinashop/alpipe/internal/objects/objname"
)

// fakeFS places finished uploads directly in fake-gcs-server's filesystem
// layout (v1.56.1, internal/backend/fs.go), so that the fake serves them as
// if it had stored them itself. We do this because the fake's own upload
// path holds every object whole in memory (see uploads.go); everything else
// (reads, stat, list, delete) still goes through the fake.
//
// The layout: <root>/<url.PathEscape(bucket)>/<object name as a path>, with
// the object's attributes as JSON (backend.ObjectAttrs) either in the
// extended attribute "user.metadata" of the file or, where the file system
// has no user xattrs, in a sibling file "<path>.metadata". The fake picks the
// variant once from the root folder; pickMetaMode repeats its test. The
// conformance suite reads every upload back through the fake, so a layout
// change in a new fake version fails the tests instead of corrupting data.
type fakeFS struct {
	root  string
	xattr bool
}

const (
	fakeXattrKey       = "user.metadata"
	fakeMetadataSuffix = ".metadata"
	// fakeTimeFormat is the fake's timestampFormat for stored times.
	fakeTimeFormat = "2006-01-02T15:04:05.999999Z07:00"
)

// fakeStoredAttrs mirrors backend.ObjectAttrs field for field: the JSON the
// fake stores beside each object. Name, bucket and size are not stored; the
// fake derives them from the path and the file.
type fakeStoredAttrs struct {
	StorageClass         string
	ContentType          string
	ContentEncoding      string
	ContentDisposition   string
	ContentLanguage      string
	CacheControl         string
	Crc32c               string
	Md5Hash              string
	Etag                 string
	ACL                  []storage.ACLRule
	Metadata             map[string]string
	Created              string
	Deleted              string
	Updated              string
	CustomTime           string
	Generation           int64
	RetentionMode        string
	RetentionRetainUntil string
}

func newFakeFS(root string) (*fakeFS, error) {
	if err := os.MkdirAll(root, 0o700); err != nil {
		return nil, err
	}
	return &fakeFS{root: root, xattr: pickMetaMode(root)}, nil
}

// pickMetaMode is the fake's own test in NewStorageFS.
func pickMetaMode(root string) bool {
	if !xattr.XATTR_SUPPORTED {
		return false
	}
	_, err := xattr.Get(root+"/", fakeXattrKey)
	var xerr *xattr.Error
	return err == nil || (errors.As(err, &xerr) && xerr.Err == xattr.ENOATTR)
}

func (f *fakeFS) bucketDir(bucket string) string {
	return filepath.Join(f.root, url.PathEscape(bucket))
}

func (f *fakeFS) bucketExists(bucket string) bool {
	st, err := os.Stat(f.bucketDir(bucket))
	return err == nil && st.IsDir()
}

// objectPath maps an object name to its file. The guard has already
// refused names that the folder tree cannot hold (objname.Local); the check
// is repeated here because this is where a name becomes a path, and the
// fake itself joins names unchecked.
func (f *fakeFS) objectPath(bucket, name string) (string, error) {
	if err := objname.Local(name); err != nil {
		return "", err
	}
	if !f.xattr && strings.HasSuffix(name, fakeMetadataSuffix) {
		return "", fmt.Errorf("object name %q: names ending in %s are reserved by the local storage fake on this file system", name, fakeMetadataSuffix)
	}
	return filepath.Join(f.bucketDir(bucket), filepath.FromSlash(name)), nil
}

// fileConflict says why the object name cannot be a file: Cloud Storage
// holds "a" beside "a/b.csv", a folder tree cannot.
func (f *fakeFS) fileConflict(bucket, name string) error {
	path, err := f.objectPath(bucket, name)
	if err != nil {
		return err
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return fmt.Errorf("object name %q is the folder of other objects (%s/...) in the local storage fake, which keeps objects as files: one name cannot be both", name, name)
	}
	dir := f.bucketDir(bucket)
	for p := filepath.Dir(path); inside(dir, p); p = filepath.Dir(p) {
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			return fmt.Errorf("object name %q needs %q as a folder, but it is an object in the local storage fake, which keeps objects as files", name, filepath.ToSlash(rel))
		}
	}
	return nil
}

// confine is the last check before a file is written: path must lie inside
// the bucket's folder, both as written and with every symbolic link of its
// folder resolved, whatever name produced it.
func (f *fakeFS) confine(bucket, path string) error {
	dir := f.bucketDir(bucket)
	if !inside(dir, path) {
		return fmt.Errorf("%s is outside the bucket folder %s", path, dir)
	}
	realDir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return err
	}
	realParent, err := filepath.EvalSymlinks(filepath.Dir(path))
	if err != nil {
		return err
	}
	if realParent != realDir && !inside(realDir, realParent) {
		return fmt.Errorf("%s resolves outside the bucket folder %s", path, dir)
	}
	return nil
}

// inside reports whether path lies strictly below dir, lexically.
func inside(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != "." && !filepath.IsAbs(rel) &&
		rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// liveGeneration reads the generation of the object stored at path, 0 when
// there is none.
func (f *fakeFS) liveGeneration(path string) int64 {
	var raw []byte
	var err error
	if f.xattr {
		raw, err = xattr.Get(path, fakeXattrKey)
	} else {
		raw, err = os.ReadFile(path + fakeMetadataSuffix)
	}
	if err != nil {
		return 0
	}
	var a fakeStoredAttrs
	if json.Unmarshal(raw, &a) != nil {
		return 0
	}
	return a.Generation
}

// place moves the finished spool file to path with its attributes. With
// xattrs the attributes ride on the spool file's inode, so one rename makes
// content and attributes appear together. There is no fsync: this is a
// developer's local data, and syncing 45 MB would cost a good part of a
// drop's time budget.
func (f *fakeFS) place(spool *os.File, bucket, path string, attrs fakeStoredAttrs) error {
	encoded, err := json.Marshal(attrs)
	if err != nil {
		return err
	}
	if !inside(f.bucketDir(bucket), path) {
		// Before MkdirAll, which would create folders outside.
		return fmt.Errorf("%s is outside the bucket folder", path)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	if err := f.confine(bucket, path); err != nil {
		return err
	}
	if f.xattr {
		if err := xattr.FSet(spool, fakeXattrKey, encoded); err != nil {
			return err
		}
		return os.Rename(spool.Name(), path)
	}
	// Attributes first: until the data is renamed in, a new object is simply
	// absent (the fake skips .metadata files when listing), never a file
	// without attributes, which would fail every listing of the bucket.
	// The suffix makes the fake's listing skip the temporary file too.
	tmp, err := os.CreateTemp(filepath.Dir(path), ".pending-*"+fakeMetadataSuffix)
	if err != nil {
		return err
	}
	_, werr := tmp.Write(encoded)
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), path+fakeMetadataSuffix)
	}
	if werr != nil {
		os.Remove(tmp.Name())
		return werr
	}
	return os.Rename(spool.Name(), path)
}

func fakeTime(t time.Time) string { return t.UTC().Format(fakeTimeFormat) }
