// Package deploy holds the offline checks of the deployment: the tests in
// this package parse terraform/*.tf, cloudbuild.yaml, the Dockerfile and
// scripts/deploy.sh, and verify what tflint and tfsec do not (push and
// scheduler OIDC tokens, no public principal, one identity per service, the
// dead-letter wiring, table schemas against internal/warehouse, the ingest
// timeout and deadline, resources that do not depend on var.image,
// prevent_destroy on state, the landing bucket's import, alpipe's own
// Firestore database, the sweeper, alerts and log metrics). No provider
// binary or cloud account is needed: expressions are evaluated with the HCL
// and cty libraries Terraform itself is built on. Where the terraform CLI is
// installed, the variable validations also run in it, and deploy.sh runs
// against stubbed gcloud, terraform and bq.
package deploy
