package dashboard

import (
	"net/url"
	"slices"
	"strings"

	"github.com/alpinashop/alpipe/internal/warehouse"
)

// parseRequest reads the API's query: the aggregation chosen
// (?aggregation=, default src.Aggregation) and the filter, checked against
// that aggregation's key. An error is a *FilterError, answered with a 400.
func parseRequest(src Source, q url.Values) (Source, Filter, error) {
	f, err := ParseFilter(q)
	if err != nil {
		return src, Filter{}, err
	}
	if name := strings.TrimSpace(q.Get("aggregation")); name != "" {
		// Only a declared name reaches a read: the list is the server's,
		// never the request's.
		if !slices.Contains(src.Aggregations, name) {
			return src, Filter{}, filterErr("aggregation", "%.128q is not a declared aggregation (want one of %s)", name, strings.Join(src.Aggregations, ", "))
		}
		src.Aggregation = name
	}
	if key, ok := warehouse.ViewKey(src.Aggregation); ok {
		if _, err := f.keysFor(src.Aggregation, key); err != nil {
			return src, Filter{}, err
		}
	}
	return src, f, nil
}
