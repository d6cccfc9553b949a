// Package alpipe registers every function with the Functions Framework for
// Go, where Cloud Run functions looks for them: the Go buildpack (gcloud run
// deploy --source . --function NAME) compiles the package at the root of
// the deployed source, generates a main that imports it and calls
// funcframework.Start, and serves the function FUNCTION_TARGET names. The
// buildpack reads this directory's files alone and needs them to import
// the framework's functions package, so every Go file here belongs to this
// one package (no _test package) and the registrations stay in it.
//
// The functions are the ones cmd/server serves, from package functions'
// wiring table. Off Cloud Run init only registers them and builds nothing
// (cmd/server's tests import this package): Functions prepares them once,
// from the environment, before serving in cmd/functions or on the first
// request. On Cloud Run (K_SERVICE set) init prepares them itself and
// exits if it cannot, so that a bad configuration fails the revision as
// it does with cmd/server. cmd/server stays the production entry point
// because funcframework.Start cannot shut down: no drain on SIGTERM.
package alpipe

import (
	"os"

	ff "github.com/GoogleCloudPlatform/functions-framework-go/functions"

	"github.com/alpinashop/alpipe/functions"
)

// Functions is the process the registrations serve.
var Functions functions.Lazy

func init() {
	ff.CloudEvent(functions.IngestCSVName, Functions.CloudEvent(functions.IngestCSVName))
	ff.HTTP(functions.AggregateOrdersName, Functions.HTTP(functions.AggregateOrdersName))
	ff.HTTP(functions.AdvanceWatermarkName, Functions.HTTP(functions.AdvanceWatermarkName))
	ff.HTTP(functions.SweepLandingName, Functions.HTTP(functions.SweepLandingName))
	if err := Functions.PrepareOnCloudRun(); err != nil {
		os.Exit(1)
	}
}
