package main

import (
	"context"
	"fmt"
	"os"
	"sync"

	"github.com/alpinashop/alpipe/internal/config"
)

// cliEnv is the CLI's environment, read once through package config like
// every other setting. Every field is optional, so reading cannot fail but
// for a malformed value, which stops the command with its name.
var cliEnv = sync.OnceValue(func() config.CLI {
	var c config.CLI
	if err := config.Load(context.Background(), &c, nil); err != nil {
		fmt.Fprintln(os.Stderr, "alpipe:", err)
		os.Exit(2)
	}
	return c
})
