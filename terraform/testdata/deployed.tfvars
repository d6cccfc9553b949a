# Used only by the offline checks (scripts/tf-check.sh, internal/deploy): an
# image pinned by a made-up digest, as a deployment passes it. The resources
# are the same as without an image; the services' configured image differs.
project_id = "alpinashop-datos"
image      = "europe-west1-docker.pkg.dev/alpinashop-datos/alpipe/server@sha256:0000000000000000000000000000000000000000000000000000000000000000"
