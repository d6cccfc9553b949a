// Package alpipe registers every function with the Functions Framework for
// Go, where Cloud Run functions looks for them: the Go buildpack (gcloud run
// deploy --source . --function NAME) compiles the package at the root of
// the deployed source, generates a main that imports it and calls
// funcframework.Start. The buildpack reads this directory's files alone and
// needs them to import the framework's functions package, so every Go file
// here belongs to this one package (no _test package).
//
// The functions are the ones cmd/server serves (package functions). Off
// Cloud Run init builds nothing (cmd/server's tests import this package);
// on Cloud Run (K_SERVICE set) it prepares them and exits if it cannot, so
// that a bad configuration fails the revision. cmd/server stays the
// production entry point because funcframework.Start cannot drain on
// SIGTERM.
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
