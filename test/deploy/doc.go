// Package deploy holds the offline checks of the deployment that Terraform
// cannot make itself; what Terraform can check runs in terraform test
// (terraform/tests, via scripts/tf-check.sh). The tests here hold the JSON
// files Terraform's test holds equal to the plan (terraform/services.json,
// topology.json, module.json) to the Go code, read what only the module's
// text shows (parsed with hclsyntax, never evaluated), and check
// cloudbuild.yaml, the Dockerfile and scripts/deploy.sh (run against
// stubbed gcloud, terraform and bq).
package deploy
