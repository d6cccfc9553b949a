package local

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/alpinashop/alpipe/internal/client"
	"github.com/alpinashop/alpipe/internal/warehouse"
)

// Query runs read-only SQL on the server's warehouse.
func Query(ctx context.Context, server, sql string) (warehouse.Result, error) {
	return client.Server{URL: server}.Query(ctx, sql)
}

// WriteResult renders a result as "table", "csv" or "json".
func WriteResult(w io.Writer, res warehouse.Result, format string) error {
	switch format {
	case "", "table":
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, strings.Join(res.Columns, "\t"))
		for _, r := range res.Rows {
			fmt.Fprintln(tw, strings.Join(r, "\t"))
		}
		return tw.Flush()
	case "csv":
		cw := csv.NewWriter(w)
		if err := cw.Write(res.Columns); err != nil {
			return err
		}
		if err := cw.WriteAll(res.Rows); err != nil {
			return err
		}
		cw.Flush()
		return cw.Error()
	case "json":
		out := make([]map[string]string, 0, len(res.Rows))
		for _, r := range res.Rows {
			m := make(map[string]string, len(r))
			for i, c := range res.Columns {
				m[c] = r[i]
			}
			out = append(out, m)
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	default:
		return fmt.Errorf("unknown format %q: want table, csv or json", format)
	}
}
