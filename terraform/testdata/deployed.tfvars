# Used only by the offline checks (scripts/tf-check.sh): an image pinned by a
# made-up digest, so that the scanners also see the resources that exist only
# once an image is deployed (services, trigger, push subscription, scheduler).
project_id = "alpinashop-datos"
image      = "europe-west1-docker.pkg.dev/alpinashop-datos/alpipe/server@sha256:0000000000000000000000000000000000000000000000000000000000000000"
