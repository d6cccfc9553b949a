package aggregation

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"maps"
	"sync"
)

// keyColumns is, per key, the descriptions of the panes table's columns
// that differ from the template table's; Terraform reads it too, to describe
// its tables exactly as internal/warehouse does.
//
//go:embed key_columns.json
var keyColumns []byte

var parsedKeyColumns = sync.OnceValues(func() (map[string]map[string]string, error) {
	var m map[string]map[string]string
	if err := json.Unmarshal(keyColumns, &m); err != nil {
		return nil, fmt.Errorf("aggregation: key_columns.json: %w", err)
	}
	return m, nil
})

// ColumnDescriptions returns, for a panes table keyed by key, the column
// descriptions that replace the template's, by column name.
func ColumnDescriptions(key string) (map[string]string, error) {
	m, err := parsedKeyColumns()
	if err != nil {
		return nil, err
	}
	d, ok := m[key]
	if !ok {
		return nil, fmt.Errorf("aggregation: key_columns.json describes no key %q", key)
	}
	return maps.Clone(d), nil
}
