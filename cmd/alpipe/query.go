package main

import (
	"context"
	"errors"
	"flag"
	"io"
	"strings"

	"github.com/alpinashop/alpipe/internal/local"
)

func runQuery(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("query", flag.ContinueOnError)
	format := fs.String("format", "table", "output: table, csv or json")
	server := serverFlag(fs)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return errors.New("query: want SQL")
	}
	res, err := local.Query(ctx, *server, strings.Join(pos, " "))
	if err != nil {
		return err
	}
	return local.WriteResult(stdout, res, *format)
}
