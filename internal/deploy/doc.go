// Package deploy holds the offline checks of the deployment: the tests in
// this package parse terraform/*.tf, cloudbuild.yaml, the Dockerfile and
// scripts/deploy.sh, and verify what tflint and tfsec do not (push and
// scheduler OIDC tokens, no public principal, one identity per service, the
// dead-letter wiring, table schemas against internal/warehouse, the ingest
// timeout). No provider binary or cloud account is needed: expressions are
// evaluated with the HCL and cty libraries Terraform itself is built on.
package deploy
