//go:build tools

// Package tools pins modules that several packages are built on while the
// repository is assembled, so that concurrent work never edits go.mod.
package tools

import (
	_ "cloud.google.com/go/bigquery"
	_ "cloud.google.com/go/firestore"
	_ "cloud.google.com/go/pubsub/v2"
	_ "cloud.google.com/go/storage"
	_ "github.com/GoogleCloudPlatform/functions-framework-go/funcframework"
	_ "github.com/GoogleCloudPlatform/functions-framework-go/functions"
	_ "github.com/cloudevents/sdk-go/v2"
	_ "github.com/duckdb/duckdb-go/v2"
	_ "github.com/fsouza/fake-gcs-server/fakestorage"
	_ "github.com/google/go-cmp/cmp"
	_ "github.com/hashicorp/hcl/v2/hclparse"
	_ "github.com/sethvargo/go-envconfig"
	_ "go.etcd.io/bbolt"
	_ "golang.org/x/term"
	_ "golang.org/x/text/encoding/charmap"
	_ "google.golang.org/api/iterator"
	_ "google.golang.org/api/option"
)
