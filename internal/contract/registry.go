// Package contract holds the data contracts of the file feeds: which objects
// a feed owns, how each column is checked and normalised, and the table it
// fills. Feeds are data, one JSON file each in feeds/ (embedded), so adding
// a feed means adding a file. Feed.Bind maps a header to the declared
// columns; Binding.Validate turns a row into warehouse values or a Reject
// with a stable code. Everything here is pure: no I/O, no clock.
package contract

import (
	"embed"
	"fmt"
	"maps"
	"path"
	"slices"
	"sync"

	"github.com/alpinashop/alpipe/internal/warehouse/schema"
)

//go:embed feeds/*.json
var feedFS embed.FS

// Registry is a set of feeds, consulted in a fixed order.
type Registry struct {
	feeds []*Feed
}

var defaultRegistry = sync.OnceValues(func() (*Registry, error) {
	entries, err := feedFS.ReadDir("feeds")
	if err != nil {
		return nil, fmt.Errorf("contract: read embedded feeds: %w", err)
	}
	files := make(map[string][]byte, len(entries))
	for _, e := range entries {
		name := path.Join("feeds", e.Name())
		b, err := feedFS.ReadFile(name)
		if err != nil {
			return nil, fmt.Errorf("contract: read %s: %w", name, err)
		}
		files[name] = b
	}
	reg, err := Parse(files)
	if err != nil {
		return nil, err
	}
	// A drift between a contract and its table would surface as failed loads.
	for _, f := range reg.feeds {
		t, err := schema.Lookup(f.table)
		if err != nil {
			return nil, fmt.Errorf("contract: feed %s: %w", f.name, err)
		}
		if err := f.CheckTable(t); err != nil {
			return nil, err
		}
		for _, a := range f.aggregates {
			if _, err := schema.Lookup(a); err != nil {
				return nil, fmt.Errorf("contract: feed %s: aggregate: %w", f.name, err)
			}
		}
	}
	return reg, nil
})

// Default returns the embedded feeds, checked against the warehouse schemas.
// The registry is immutable and shared.
func Default() (*Registry, error) {
	return defaultRegistry()
}

// Parse compiles feed declarations keyed by file name, which orders the
// feeds; it does not check them against the warehouse (Feed.CheckTable).
func Parse(files map[string][]byte) (*Registry, error) {
	reg := &Registry{}
	seen := map[string]string{}
	for _, n := range slices.Sorted(maps.Keys(files)) {
		f, err := compile(files[n])
		if err != nil {
			return nil, fmt.Errorf("contract: %s: %w", n, err)
		}
		if prev, dup := seen[f.name]; dup {
			return nil, fmt.Errorf("contract: %s: feed %s is already declared in %s", n, f.name, prev)
		}
		seen[f.name] = n
		reg.feeds = append(reg.feeds, f)
	}
	return reg, nil
}

// Match returns the first feed, in file name order, whose object pattern
// matches the object name.
func (r *Registry) Match(object string) (*Feed, bool) {
	for _, f := range r.feeds {
		if f.objects.MatchString(object) {
			return f, true
		}
	}
	return nil, false
}

func (r *Registry) Feeds() []*Feed {
	return append([]*Feed(nil), r.feeds...)
}

func (r *Registry) Feed(name string) (*Feed, bool) {
	for _, f := range r.feeds {
		if f.name == name {
			return f, true
		}
	}
	return nil, false
}
