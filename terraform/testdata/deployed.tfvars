# Used only by the offline checks (scripts/tf-check.sh, test/deploy): a dev
# environment deployed with an image pinned by a made-up digest, as a
# deployment passes it. The resources are the same as without an image; the
# services' configured image differs. terraform/services.json and
# terraform/topology.json are what Terraform deploys with these variables.
project_id  = "alpipe-dev-example"
environment = "dev"
image       = "europe-west1-docker.pkg.dev/alpipe-dev-example/alpipe/server@sha256:0000000000000000000000000000000000000000000000000000000000000000"
