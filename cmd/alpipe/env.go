package main

import (
	"context"
	"fmt"
	"os"

	"github.com/alpinashop/alpipe/internal/config"
)

// cliEnv is the CLI's environment, read through package config like every
// other setting. A command reads it when it parses its flags (once per
// process: one command runs), so tests can set the environment per case.
// Every field is optional, so reading fails only on a malformed value,
// which stops the command with its name.
func cliEnv() config.CLI {
	var c config.CLI
	if err := config.Load(context.Background(), &c, nil); err != nil {
		fmt.Fprintln(os.Stderr, "alpipe:", err)
		os.Exit(2)
	}
	return c
}
