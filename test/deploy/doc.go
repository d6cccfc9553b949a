// Package deploy holds the offline checks of the deployment that Terraform
// cannot make itself. What Terraform can check runs in terraform test
// (terraform/tests, via scripts/tf-check.sh): OIDC on the push subscription
// and the scheduler jobs, the invoker and runtime grants, one identity per
// service, the dead-letter wiring, the variable validations and the
// services' postcondition, an infrastructure change without an image, and
// each service's environment against terraform/services.json, and each
// environment's own variables (tests/dev, tests/prod).
//
// The tests here read the module's text or compare it with the Go code:
// prevent_destroy only on the guards of production's data (a lifecycle
// setting no terraform test can observe), bucket names derived from the
// project, no public principal written anywhere, the landing bucket's
// import block, services.json against internal/config's env tags, table
// schemas against internal/warehouse, Firestore collections against the
// adapters, alerts and log metrics against the log lines, cloudbuild.yaml,
// the Dockerfile and scripts/deploy.sh (run against stubbed gcloud,
// terraform and bq: its target, its confirmations, its smoke step's rows).
// Expressions are evaluated with test/tfconfig.
package deploy
