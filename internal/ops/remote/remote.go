// Package remote is the client side of the ops commands against a running
// `alpipe serve`. The code lives in package client, which links neither the
// server nor DuckDB; Server is kept here for the callers written against it.
package remote

import "github.com/alpinashop/alpipe/internal/client"

// Server is a running local server, by its base URL.
type Server = client.Server
