// Package deploy holds the offline checks of the deployment that Terraform
// cannot make itself. What Terraform can check runs in terraform test
// (terraform/tests, via scripts/tf-check.sh): deployment.tftest.hcl (OIDC,
// grants, one identity per service, dead letters, Firestore fields and TTL,
// tables and views, services.json, topology.json and module.json against
// the plan, an infrastructure change without an image), monitoring.tftest.hcl
// (log metrics against the log contract's fields, the dashboard, the alert
// policies), buckets.tftest.hcl (bucket names, dev guards), validations and
// tasks, and each environment's own variables (tests/dev, tests/prod).
//
// The tests here compare the JSON files Terraform's test holds equal to the
// plan (terraform/services.json, topology.json, module.json) with the Go
// code: the variables each function's configuration looks up,
// internal/warehouse's tables and views, internal/aggregation's
// declarations, the collection groups internal/ledger and internal/stream
// declare (their suites check they are what they write), the reject codes;
// and read what only text shows, parsed with hclsyntax but never evaluated:
// prevent_destroy only on the guards of production's data, the landing
// bucket's import block, no public principal written anywhere, no default
// naming a production bucket, moved blocks, every metric and alert named by
// monitoring.tftest.hcl, terraform fmt. And cloudbuild.yaml,
// the Dockerfile and scripts/deploy.sh (run against stubbed gcloud,
// terraform and bq: its target, its confirmations, its smoke step's rows).
package deploy
