#!/usr/bin/env bash
# First deployment of alpipe into a Google Cloud project, by hand, in this
# exact order (each step can also be run alone, and re-run safely):
#
#   1. bootstrap  enable the APIs; create the versioned Terraform state bucket
#   2. infra      terraform apply. Once the services exist: the whole
#                 configuration, passing the image the services run (so a
#                 function added since is created with it). On a new project
#                 (no service yet, no image to run): only what the build
#                 needs (APIs, Artifact Registry repository, the buckets,
#                 deployer identity and its grants), as -target applies.
#   3. build      gcloud builds submit with cloudbuild.yaml (vet, tests with the
#                 emulators, image build and push; _DEPLOY=false), then looks
#                 up the pushed image's digest and records it in
#                 .cache/deploy/image for the deploy step
#   4. deploy     terraform apply -var image=<repo>/server@sha256:...: the
#                 data, identities and observability, the four Cloud Run
#                 services, their run.invoker grants, the Eventarc trigger,
#                 the push subscription and the scheduler jobs; then rolls
#                 existing services to that digest, as the pipeline does
#   5. smoke      drop a CSV into the landing bucket, publish an order with
#                 momento_evento, run the tick, read the view with bq query
#
# After this, every push to the main branch deploys through the Cloud Build
# trigger (cloudbuild.yaml, running as alpipe-deployer); infrastructure
# changes are applied with `scripts/deploy.sh infra`. Every gcloud and
# terraform failure stops the script: nothing is guessed from a failed call.
#
# Usage: scripts/deploy.sh [bootstrap|infra|build|deploy|smoke]...   (none: all, in order)
# Environment:
#   PROJECT_ID       target project                     (default: alpinashop-datos)
#   REGION           region of everything               (default: europe-west1)
#   TF_STATE_BUCKET  Terraform state bucket             (default: <PROJECT_ID>-tfstate)
#   IMAGE_TAG        image tag to build                 (default: git HEAD, plus -dirty-<time>
#                    for a modified tree; computed once per run)
#   IMAGE            image the deploy step deploys      (default: the one the last build
#                    step recorded in .cache/deploy/image)
#   AUTO_APPROVE     1: apply without Terraform's prompt (default: prompt)
# Other Terraform variables (bucket names, stream settings, alert channels, ...)
# go in terraform/terraform.tfvars, which Terraform reads by itself.
# Requires gcloud (logged in as a project owner), terraform >= 1.9, bq.

set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TF_DIR="$ROOT/terraform"
PROJECT_ID="${PROJECT_ID:-alpinashop-datos}"
REGION="${REGION:-europe-west1}"
TF_STATE_BUCKET="${TF_STATE_BUCKET:-${PROJECT_ID}-tfstate}"
AUTO_APPROVE="${AUTO_APPROVE:-0}"
# The build step records the digest it pushed here; the deploy step reads it.
IMAGE_RECORD="$ROOT/.cache/deploy/image"
# The first Cloud Run service: whether it exists tells a new project from a
# deployed one, and its image is the one an infrastructure apply passes.
PROBE_SERVICE=alpipe-ingest

# What the build needs before any service can exist: the -target list of the
# first infra apply on a new project. All the buckets, not only the build
# one: the landing bucket's import block then applies to a targeted resource
# (and a wrong landing_bucket fails this first, small apply).
BOOTSTRAP_TARGETS=(
  google_project_service.api
  google_artifact_registry_repository.images
  google_artifact_registry_repository_iam_member.deployer_writer
  google_storage_bucket.bucket
  google_storage_bucket_iam_member.deployer_build_sources
  google_project_iam_member.deployer_log_writer
)

# The APIs alpipe uses; the same list as terraform/apis.tf (checked by a test).
APIS=(
  artifactregistry.googleapis.com
  bigquery.googleapis.com
  cloudbuild.googleapis.com
  cloudresourcemanager.googleapis.com
  cloudscheduler.googleapis.com
  eventarc.googleapis.com
  firestore.googleapis.com
  iam.googleapis.com
  iamcredentials.googleapis.com
  logging.googleapis.com
  monitoring.googleapis.com
  pubsub.googleapis.com
  run.googleapis.com
  serviceusage.googleapis.com
  storage.googleapis.com
)

log() { printf '\n==> %s\n' "$*" >&2; }
die() { printf 'deploy.sh: %s\n' "$*" >&2; exit 1; }

need() {
  local tool
  for tool in "$@"; do
    command -v "$tool" >/dev/null 2>&1 || die "$tool is required"
  done
}

# image_tag prints the tag to build. A modified tree gets a time stamp, so
# main computes it once per run: build and deploy must agree on it.
image_tag() {
  if [[ -n "${IMAGE_TAG:-}" ]]; then
    printf '%s\n' "$IMAGE_TAG"
  elif git -C "$ROOT" rev-parse --verify HEAD >/dev/null 2>&1; then
    local sha status
    sha="$(git -C "$ROOT" rev-parse HEAD)"
    status="$(git -C "$ROOT" status --porcelain)"
    if [[ -n "$status" ]]; then
      sha="$sha-dirty-$(date -u +%Y%m%d%H%M%S)"
    fi
    printf '%s\n' "$sha"
  else
    date -u +manual-%Y%m%d%H%M%S
  fi
}

tf() { terraform -chdir="$TF_DIR" "$@"; }

tf_init() {
  tf init -input=false -reconfigure -backend-config="bucket=$TF_STATE_BUCKET" >/dev/null
}

tf_apply() {
  local args=(apply -input=false -var "project_id=$PROJECT_ID" -var "region=$REGION")
  if [[ "$AUTO_APPROVE" == 1 ]]; then
    args+=(-auto-approve)
  fi
  tf "${args[@]}" "$@"
}

# tf_output_key OUTPUT KEY prints one entry of a map output.
tf_output_key() {
  tf output -json "$1" | tr -d ' \n' | sed -n "s/.*\"$2\":\"\\([^\"]*\\)\".*/\\1/p"
}

# running_image prints the image PROBE_SERVICE runs, or nothing when the
# service does not exist. Any other failure (no credentials, wrong project,
# API disabled) stops the script: guessing "no service" from a failed call
# would make the infra step take the new-project path.
running_image() {
  gcloud run services list --project="$PROJECT_ID" --region="$REGION" \
    --filter="metadata.name=$PROBE_SERVICE" \
    --format='value(spec.template.spec.containers[0].image)'
}

step_bootstrap() {
  log "1/5 bootstrap: APIs and Terraform state bucket in $PROJECT_ID"
  gcloud services enable "${APIS[@]}" --project="$PROJECT_ID"
  if ! gcloud storage buckets describe "gs://$TF_STATE_BUCKET" --project="$PROJECT_ID" >/dev/null 2>&1; then
    gcloud storage buckets create "gs://$TF_STATE_BUCKET" --project="$PROJECT_ID" \
      --location="$REGION" --uniform-bucket-level-access --public-access-prevention
  fi
  # Versioned state: a bad apply can be rolled back to the previous state file.
  gcloud storage buckets update "gs://$TF_STATE_BUCKET" --versioning >/dev/null
}

step_infra() {
  log "2/5 infra: terraform apply"
  tf_init
  local image target args=()
  image="$(running_image)"
  if [[ -n "$image" ]]; then
    # Existing services ignore it; a function added since is created with it.
    tf_apply -var "image=$image"
    return
  fi
  log "no $PROBE_SERVICE service yet: applying only what the build needs"
  for target in "${BOOTSTRAP_TARGETS[@]}"; do
    args+=("-target=$target")
  done
  tf_apply "${args[@]}"
}

step_build() {
  log "3/5 build: Cloud Build (tests, image, push) of $TAG"
  local build_bucket image
  tf_init
  build_bucket="$(tf_output_key bucket_names build)"
  [[ -n "$build_bucket" ]] || die "no build bucket in the Terraform outputs: run the infra step first"
  gcloud builds submit "$ROOT" --project="$PROJECT_ID" --region="$REGION" \
    --config="$ROOT/cloudbuild.yaml" \
    --gcs-source-staging-dir="gs://$build_bucket/source" \
    --substitutions="COMMIT_SHA=$TAG,_REGION=$REGION,_DEPLOY=false"
  image="$(image_ref "$TAG")"
  mkdir -p "$(dirname "$IMAGE_RECORD")"
  printf '%s\n' "$image" >"$IMAGE_RECORD"
  printf '%s\n' "$image"
}

# image_ref TAG prints repository/server@sha256:... for a pushed tag.
image_ref() {
  local repo digest
  repo="$(tf output -raw image_repository)"
  digest="$(gcloud artifacts docker images describe "$repo/server:$1" \
    --project="$PROJECT_ID" --format='value(image_summary.digest)')"
  [[ "$digest" == sha256:* ]] || die "no digest found for $repo/server:$1"
  printf '%s@%s\n' "$repo/server" "$digest"
}

# deploy_image prints what the deploy step deploys: IMAGE, else the digest
# the last build step recorded, else (an explicit IMAGE_TAG) that tag's digest.
deploy_image() {
  if [[ -n "${IMAGE:-}" ]]; then
    printf '%s\n' "$IMAGE"
  elif [[ -s "$IMAGE_RECORD" ]]; then
    cat "$IMAGE_RECORD"
  elif [[ -n "${IMAGE_TAG:-}" ]]; then
    image_ref "$IMAGE_TAG"
  else
    die "nothing to deploy: run the build step first, or set IMAGE=<repo>/server@sha256:..."
  fi
}

step_deploy() {
  log "4/5 deploy: services, trigger, push subscription, scheduler jobs"
  local image service
  tf_init
  image="$(deploy_image)"
  [[ "$image" == *@sha256:* ]] || die "refusing to deploy $image: not pinned by digest"
  tf_apply -var "image=$image"
  # Terraform creates the services with this image but, by design, does not
  # roll existing ones forward (run.tf ignores image changes): do it here.
  for service in alpipe-ingest alpipe-orders alpipe-watermark alpipe-sweeper; do
    gcloud run services update "$service" --project="$PROJECT_ID" --region="$REGION" \
      --image="$image" --quiet
  done
}

# bq_scalar SQL prints the single value a query returns.
bq_scalar() {
  bq query --project_id="$PROJECT_ID" --use_legacy_sql=false --format=csv --quiet "$1" | tail -n 1
}

step_smoke() {
  log "5/5 smoke test"
  tf_init
  local landing quarantine dataset stamp object csv order now rows
  landing="$(tf_output_key bucket_names landing)"
  quarantine="$(tf_output_key bucket_names quarantine)"
  dataset="$(tf output -raw dataset | tr ':' '.')"
  stamp="$(date -u +%Y%m%d%H%M%S)"

  # One valid line and one the ERP gets wrong (unquoted decimal comma: 9
  # fields): expect 1 loaded row and 1 quarantined row. SMOKE-* identifies
  # the test data.
  object="exportaciones/$(date -u +%Y/%m/%d)/smoke-$stamp.csv"
  csv="$(mktemp)"
  trap 'rm -f "$csv"' RETURN
  printf '%s\r\n' \
    'pedido_id,linea,fecha,sku,cantidad,precio_unitario,cliente_id,pais' \
    "SMOKE-$stamp,1,$(date -u +%Y-%m-%d),SMOKE-TEST,1,\"0,01\",C-SMOKE,ES" \
    "SMOKE-$stamp,2,$(date -u +%Y-%m-%d),SMOKE-TEST,1,0,01,C-SMOKE,ES" >"$csv"
  gcloud storage cp "$csv" "gs://$landing/$object" --project="$PROJECT_ID"

  rows=0
  for _ in $(seq 1 30); do
    rows="$(bq_scalar "SELECT COUNT(*) FROM \`$dataset.lineas_pedido\` WHERE source_object LIKE '%/$object'")"
    [[ "$rows" -ge 1 ]] && break
    sleep 10
  done
  [[ "$rows" == 1 ]] || die "expected 1 loaded row from gs://$landing/$object, got $rows"
  echo "file: 1 row loaded into $dataset.lineas_pedido"
  gcloud storage ls "gs://$quarantine/cuarentena/**" --project="$PROJECT_ID" | grep "smoke-$stamp" \
    || die "no quarantine file for $object"

  # An order made now; the EARLY pane appears at the first tick at least
  # EARLY_DELAY (60 s) after it arrived.
  now="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  order="{\"pedido_id\":\"SMOKE-$stamp\",\"cliente_id\":\"C-SMOKE\",\"pais\":\"ES\",\"importe_total\":\"0.01\",\"lineas\":[{\"sku\":\"SMOKE-TEST\",\"cantidad\":1,\"precio_unitario\":\"0.01\"}]}"
  gcloud pubsub topics publish "$(tf output -raw orders_topic)" --project="$PROJECT_ID" \
    --message="$order" --attribute="momento_evento=$now"

  rows=0
  for _ in $(seq 1 12); do
    sleep 20
    gcloud scheduler jobs run alpipe-watermark-tick --project="$PROJECT_ID" --location="$REGION" >/dev/null
    rows="$(bq_scalar "SELECT COUNT(*) FROM \`$dataset.ventas_hora_pais\` WHERE pais = 'ES' AND window_start = TIMESTAMP_TRUNC(TIMESTAMP('$now'), HOUR)")"
    [[ "$rows" -ge 1 ]] && break
  done
  [[ "$rows" -ge 1 ]] || die "no pane for ES in the current hour after 4 minutes"
  bq query --project_id="$PROJECT_ID" --use_legacy_sql=false \
    "SELECT window_start, pais, importe, pedidos, unidades, timing, pane_index FROM \`$dataset.ventas_hora_pais\` WHERE window_start = TIMESTAMP_TRUNC(TIMESTAMP('$now'), HOUR) ORDER BY pais"
  echo "smoke test passed"
}

usage() {
  # The header comment above is the help text: print it without the '#'.
  sed -n '2,/^$/{s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}" | sed '/^set -euo/,$d'
}

main() {
  case "${1:-}" in
    -h | --help | help)
      usage
      return 0
      ;;
  esac
  need gcloud terraform bq
  # Once per run: a modified tree's tag carries the time, and the build and
  # deploy steps of one run must name the same image.
  TAG="$(image_tag)"
  local steps=("$@")
  if [[ ${#steps[@]} -eq 0 ]]; then
    steps=(bootstrap infra build deploy smoke)
  fi
  local step
  for step in "${steps[@]}"; do
    case "$step" in
      bootstrap | infra | build | deploy | smoke) "step_$step" ;;
      *) die "unknown step $step (want bootstrap, infra, build, deploy or smoke; --help explains each)" ;;
    esac
  done
}

main "$@"
