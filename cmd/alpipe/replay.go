package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"

	"github.com/alpinashop/alpipe/internal/localapi"
	"github.com/alpinashop/alpipe/internal/replay"
)

// runReplay runs the live window engine over historical orders as a bounded
// stream, on the server (which holds the warehouse). Each (window, key) gets
// exactly one ON_TIME pane in the live panes table under the live
// aggregation name. lineas_pedido has no time of day: its orders get event
// time 12:00 UTC of their fecha, so hourly windows show each date's sales in
// its 12:00 window (daily totals exact, hours not). A window that already
// has other panes (live ones) is refused, and the command then exits
// non-zero; re-running a replay adds nothing. See package replay for the
// details.
func runReplay(ctx context.Context, c *cmdline, stdout io.Writer) error {
	fromTable := c.Bool("from-table", false, "replay lineas_pedido, one order per pedido_id at 12:00 UTC of its fecha, instead of a JSONL file")
	dates := c.String("dates", "", "only these UTC `DATES` of event time: YYYY-MM-DD or YYYY-MM-DD..YYYY-MM-DD (default: all)")
	if err := c.parse(); err != nil {
		return err
	}
	pos := c.pos
	if *fromTable == (len(pos) == 1) || len(pos) > 1 {
		return c.usagef("want either FILE.jsonl (orders, as for publish) or --from-table")
	}
	if _, err := replay.ParseDates(*dates); err != nil {
		return c.usagef("--%w", err)
	}
	q := url.Values{}
	if *dates != "" {
		q.Set("dates", *dates)
	}
	var body io.Reader = http.NoBody
	if *fromTable {
		q.Set("source", replay.SourceTable)
	} else {
		f, err := os.Open(pos[0])
		if err != nil {
			return fmt.Errorf("replay: %w", err)
		}
		defer f.Close()
		body = f // streamed: the file is never held in memory
	}
	if err := c.srv.Ping(ctx); err != nil {
		return fmt.Errorf("replay: %w", err)
	}
	rep, err := postReplay(ctx, c.srv.URL+localapi.ReplayPath+"?"+q.Encode(), body)
	if err != nil {
		return err
	}
	if err := report(stdout, c.format, rep, rep.WriteText); err != nil {
		return err
	}
	if !rep.OK() {
		return fmt.Errorf("replay: refused %d windows that already have other panes (listed above)", rep.Conflicts)
	}
	return nil
}

func postReplay(ctx context.Context, target string, body io.Reader) (replay.Report, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, body)
	if err != nil {
		return replay.Report{}, err
	}
	req.Header.Set("Content-Type", replay.ContentType)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return replay.Report{}, fmt.Errorf("replay: the server stopped answering: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 16<<10))
		return replay.Report{}, fmt.Errorf("replay: HTTP %d: %s", resp.StatusCode, strings.TrimSpace(string(b)))
	}
	var rep replay.Report
	if err := json.NewDecoder(resp.Body).Decode(&rep); err != nil {
		return replay.Report{}, fmt.Errorf("replay: read the report: %w", err)
	}
	return rep, nil
}
