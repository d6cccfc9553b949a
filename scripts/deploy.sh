#!/usr/bin/env bash
# Deployment of alpipe into one Google Cloud project, by hand. Nothing runs
# without a target: the project, its environment and the steps, all named.
#
# Steps, in this order on a first deployment (each can also be run alone,
# and re-run safely):
#   bootstrap  enable the APIs; create the versioned Terraform state bucket
#   infra      terraform apply. Once the services exist: the whole
#              configuration, passing the image the services run (so a
#              function added since is created with it). On a new project
#              (no service yet, no image to run): only what the build needs
#              (APIs, Artifact Registry repository, the buckets, deployer
#              identity and its grants), as -target applies.
#   build      gcloud builds submit with cloudbuild.yaml (vet, tests with the
#              emulators, image build and push; _DEPLOY=false), then looks up
#              the pushed image's digest and records it in
#              .cache/deploy/<project>.image for the deploy step
#   deploy     terraform apply -var image=<repo>/server@sha256:...: the data,
#              identities and observability, the four Cloud Run services,
#              their run.invoker grants, the Eventarc trigger, the push
#              subscription and the scheduler jobs; then rolls existing
#              services to that digest, as the pipeline does
#   all        bootstrap, infra, build and deploy
#   smoke      dev only, and only when named: drops a CSV of its own into
#              the landing bucket, publishes an order of its own, runs the
#              tick, reads the view, then deletes its rows and objects (see
#              step_smoke for what stays)
#
# Usage: scripts/deploy.sh --project ID --env dev|prod [--region REGION] [--yes] STEP...
#        scripts/deploy.sh --help
#   --project  the project (or PROJECT_ID); there is no default
#   --env      prod reads terraform/env/prod.tfvars, and only for the project
#              it names (which no other environment may target); dev reads
#              terraform/env/dev.tfvars when it exists (a copy of
#              env/dev.tfvars.example). The project, environment and region
#              are passed to Terraform on top.
#   --yes      apply without asking. Otherwise every apply is planned first
#              and applied from that plan only after a confirmation: "yes"
#              in dev, the project ID typed back in prod.
# Without a project, an environment or a step it prints this and exits 2,
# having touched nothing.
#
# Environment:
#   PROJECT_ID       the project, when --project is not given
#   REGION           region of everything               (default: europe-west1)
#   TF_STATE_BUCKET  Terraform state bucket             (default: <project>-tfstate)
#   IMAGE_TAG        image tag to build                 (default: git HEAD, plus -dirty-<time>
#                    for a modified tree; computed once per run)
#   IMAGE            image the deploy step deploys      (default: the one the last build
#                    step recorded for the project in .cache/deploy/<project>.image)
#
# After this, every push to the main branch deploys through the Cloud Build
# trigger (cloudbuild.yaml, running as alpipe-deployer); infrastructure
# changes are applied with the infra step. Every gcloud and terraform failure
# stops the script: nothing is guessed from a failed call.
# Requires gcloud (logged in as a project owner), terraform >= 1.9, bq.

set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TF_DIR="$ROOT/terraform"
PROJECT_ID="${PROJECT_ID:-}"
REGION="${REGION:-europe-west1}"
ENVIRONMENT=""
YES=0
DEPLOY_CACHE="$ROOT/.cache/deploy"
# The first Cloud Run service: whether it exists tells a new project from a
# deployed one, and its image is the one an infrastructure apply passes.
PROBE_SERVICE=alpipe-ingest
# What the smoke step writes carries these, and nothing else does: an order
# ID prefix, a SKU and a country of their own (AQ, Antarctica: a code the
# order validation accepts, where AlpinaShop sells nothing), so that its
# panes are keys of their own and its rows can be deleted by name.
SMOKE_SKU=ALPIPE-SMOKE
SMOKE_COUNTRY=AQ

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

usage() {
  # The header comment above is the help text: print it without the '#'.
  sed -n '2,/^$/{s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}" | sed '/^set -euo/,$d'
}

# usage_error explains what is missing or refused, then the usage: exit 2,
# before anything is called.
usage_error() {
  printf 'deploy.sh: %s\n\n' "$*" >&2
  usage >&2
  exit 2
}

need() {
  local tool
  for tool in "$@"; do
    command -v "$tool" >/dev/null 2>&1 || die "$tool is required"
  done
}

# tfvars_project FILE prints the project_id a tfvars file sets, if any.
tfvars_project() {
  sed -n 's/^[[:space:]]*project_id[[:space:]]*=[[:space:]]*"\([^"]*\)".*/\1/p' "$1" | head -n 1
}

# parse_args sets PROJECT_ID, ENVIRONMENT, REGION, YES, STEPS and TF_VARS,
# or stops with the usage.
parse_args() {
  STEPS=()
  while (($# > 0)); do
    case "$1" in
      -h | --help | help)
        usage
        exit 0
        ;;
      --project | --env | --region)
        (($# > 1)) || usage_error "$1 needs a value"
        case "$1" in
          --project) PROJECT_ID="$2" ;;
          --env) ENVIRONMENT="$2" ;;
          --region) REGION="$2" ;;
        esac
        shift
        ;;
      --project=*) PROJECT_ID="${1#*=}" ;;
      --env=*) ENVIRONMENT="${1#*=}" ;;
      --region=*) REGION="${1#*=}" ;;
      --yes) YES=1 ;;
      -*) usage_error "unknown option $1" ;;
      all) STEPS+=(bootstrap infra build deploy) ;;
      bootstrap | infra | build | deploy | smoke) STEPS+=("$1") ;;
      *) usage_error "unknown step $1" ;;
    esac
    shift
  done

  [[ -n "$PROJECT_ID" ]] || usage_error "no project: name it with --project ID (or PROJECT_ID)"
  [[ -n "$ENVIRONMENT" ]] || usage_error "no environment: name it with --env dev or --env prod"
  [[ "$ENVIRONMENT" == dev || "$ENVIRONMENT" == prod ]] || usage_error "environment $ENVIRONMENT: want dev or prod"
  ((${#STEPS[@]} > 0)) || usage_error "no step: name the steps to run (all: a first deployment)"

  # Terraform reads these by itself, in every environment: settings meant
  # for one would reach the other.
  local auto
  for auto in "$TF_DIR/terraform.tfvars" "$TF_DIR"/*.auto.tfvars; do
    [[ ! -e "$auto" ]] ||
      usage_error "${auto#"$ROOT/"} would apply to every environment: move its settings to terraform/env/$ENVIRONMENT.tfvars"
  done

  local prod_vars="$TF_DIR/env/prod.tfvars" vars prod_project=""
  if [[ -f "$prod_vars" ]]; then
    prod_project="$(tfvars_project "$prod_vars")"
  fi
  vars="$TF_DIR/env/$ENVIRONMENT.tfvars"
  TF_VARS=()
  if [[ "$ENVIRONMENT" == prod ]]; then
    [[ -f "$vars" ]] || usage_error "no terraform/env/prod.tfvars: production's variables are required"
    [[ "$PROJECT_ID" == "$prod_project" ]] ||
      usage_error "project $PROJECT_ID is not production's: terraform/env/prod.tfvars names $prod_project"
    local step
    for step in "${STEPS[@]}"; do
      [[ "$step" != smoke ]] ||
        usage_error "smoke runs against a dev environment only: its panes cannot be deleted from BigQuery's streaming buffer"
    done
  elif [[ -n "$prod_project" && "$PROJECT_ID" == "$prod_project" ]]; then
    usage_error "project $PROJECT_ID is production's (terraform/env/prod.tfvars): deploy it with --env prod"
  fi
  if [[ -f "$vars" ]]; then
    local named
    named="$(tfvars_project "$vars")"
    [[ -z "$named" || "$named" == "$PROJECT_ID" ]] ||
      usage_error "terraform/env/$ENVIRONMENT.tfvars names project $named, not $PROJECT_ID"
    TF_VARS+=("-var-file=$vars")
  fi
  TF_VARS+=(-var "project_id=$PROJECT_ID" -var "environment=$ENVIRONMENT" -var "region=$REGION")
  TF_STATE_BUCKET="${TF_STATE_BUCKET:-${PROJECT_ID}-tfstate}"
  # The build step records the digest it pushed here; the deploy step reads
  # it. One record per project: an image built for dev is not prod's.
  IMAGE_RECORD="$DEPLOY_CACHE/$PROJECT_ID.image"
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

# confirm WHAT asks before WHAT is done: "yes" in dev, the project ID in
# prod. --yes answers for the user; no answer (no terminal) is a no.
confirm() {
  ((YES == 1)) && return 0
  local want=yes answer=""
  if [[ "$ENVIRONMENT" == prod ]]; then
    want="$PROJECT_ID"
  fi
  printf '\n%s in the %s environment %s? Type %s to go on: ' "$1" "$ENVIRONMENT" "$PROJECT_ID" "$want" >&2
  read -r answer || answer=""
  [[ "$answer" == "$want" ]]
}

# tf_apply ARGS... plans with the environment's variables and ARGS, shows
# the plan, and applies exactly that plan once confirmed.
tf_apply() {
  local plan="$DEPLOY_CACHE/$PROJECT_ID.tfplan"
  mkdir -p "$DEPLOY_CACHE"
  tf plan -input=false -out="$plan" "${TF_VARS[@]}" "$@"
  if ! confirm "Apply this plan"; then
    rm -f "$plan"
    die "not confirmed: nothing applied"
  fi
  tf apply -input=false "$plan"
  rm -f "$plan"
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
  log "bootstrap: APIs and Terraform state bucket in $PROJECT_ID ($ENVIRONMENT)"
  gcloud services enable "${APIS[@]}" --project="$PROJECT_ID"
  if ! gcloud storage buckets describe "gs://$TF_STATE_BUCKET" --project="$PROJECT_ID" >/dev/null 2>&1; then
    gcloud storage buckets create "gs://$TF_STATE_BUCKET" --project="$PROJECT_ID" \
      --location="$REGION" --uniform-bucket-level-access --public-access-prevention
  fi
  # Versioned state: a bad apply can be rolled back to the previous state file.
  gcloud storage buckets update "gs://$TF_STATE_BUCKET" --versioning >/dev/null
}

step_infra() {
  log "infra: terraform apply in $PROJECT_ID ($ENVIRONMENT)"
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
  log "build: Cloud Build (tests, image, push) of $TAG in $PROJECT_ID"
  local build_bucket image
  tf_init
  build_bucket="$(tf_output_key bucket_names build)"
  [[ -n "$build_bucket" ]] || die "no build bucket in the Terraform outputs: run the infra step first"
  gcloud builds submit "$ROOT" --project="$PROJECT_ID" --region="$REGION" \
    --config="$ROOT/cloudbuild.yaml" \
    --gcs-source-staging-dir="gs://$build_bucket/source" \
    --substitutions="COMMIT_SHA=$TAG,_REGION=$REGION,_DEPLOY=false"
  image="$(image_ref "$TAG")"
  mkdir -p "$DEPLOY_CACHE"
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
  log "deploy: services, trigger, push subscription, scheduler jobs in $PROJECT_ID ($ENVIRONMENT)"
  local image service
  tf_init
  image="$(deploy_image)"
  [[ "$image" == *@sha256:* ]] || die "refusing to deploy $image: not pinned by digest"
  log "the apply below is followed by rolling the four services to $image"
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

# The smoke test's own rows and objects, removed on any exit of the step
# once it has written something. A pane cannot be deleted while it sits in
# BigQuery's streaming buffer (up to about 90 minutes), so the panes of the
# smoke order stay, under keys nothing else has (SMOKE_COUNTRY in
# ventas_hora_pais, SMOKE_SKU in ventas_sku_hora_movil), with its Firestore
# window state, which expires. Dev only: production keeps no smoke row.
SMOKE_ID=""
smoke_cleanup() {
  [[ -n "$SMOKE_ID" ]] || return 0
  log "smoke: removing $SMOKE_ID's rows and objects"
  bq query --project_id="$PROJECT_ID" --use_legacy_sql=false --quiet \
    "DELETE FROM \`$SMOKE_DATASET.lineas_pedido\` WHERE pedido_id = '$SMOKE_ID'"
  # What a refresh of the date would give once those lines are gone: no
  # other line has this SKU.
  bq query --project_id="$PROJECT_ID" --use_legacy_sql=false --quiet \
    "DELETE FROM \`$SMOKE_DATASET.ventas_diarias_sku\` WHERE sku = '$SMOKE_SKU'"
  gcloud storage rm --all-versions "gs://$SMOKE_LANDING/$SMOKE_OBJECT" --project="$PROJECT_ID"
  gcloud storage rm "gs://$SMOKE_QUARANTINE/cuarentena/**/$(basename "$SMOKE_OBJECT" .csv)*" --project="$PROJECT_ID"
  echo "left: the panes of $SMOKE_COUNTRY and $SMOKE_SKU (streaming buffer), the ledger record of the object"
}

step_smoke() {
  log "smoke test in $PROJECT_ID ($ENVIRONMENT): a file and an order of its own, removed afterwards"
  [[ "$ENVIRONMENT" == dev ]] || die "smoke runs against a dev environment only"
  tf_init
  local stamp csv order now rows
  SMOKE_LANDING="$(tf_output_key bucket_names landing)"
  SMOKE_QUARANTINE="$(tf_output_key bucket_names quarantine)"
  SMOKE_DATASET="$(tf output -raw dataset | tr ':' '.')"
  stamp="$(date -u +%Y%m%d%H%M%S)"

  # One valid line and one the ERP gets wrong (unquoted decimal comma: 9
  # fields): expect 1 loaded row and 1 quarantined row.
  SMOKE_OBJECT="exportaciones/$(date -u +%Y/%m/%d)/smoke-$stamp.csv"
  csv="$(mktemp)"
  printf '%s\r\n' \
    'pedido_id,linea,fecha,sku,cantidad,precio_unitario,cliente_id,pais' \
    "SMOKE-$stamp,1,$(date -u +%Y-%m-%d),$SMOKE_SKU,1,\"0,01\",C-SMOKE,$SMOKE_COUNTRY" \
    "SMOKE-$stamp,2,$(date -u +%Y-%m-%d),$SMOKE_SKU,1,0,01,C-SMOKE,$SMOKE_COUNTRY" >"$csv"
  SMOKE_ID="SMOKE-$stamp"
  trap smoke_cleanup EXIT
  gcloud storage cp "$csv" "gs://$SMOKE_LANDING/$SMOKE_OBJECT" --project="$PROJECT_ID"
  rm -f "$csv"

  rows=0
  for _ in $(seq 1 30); do
    rows="$(bq_scalar "SELECT COUNT(*) FROM \`$SMOKE_DATASET.lineas_pedido\` WHERE pedido_id = '$SMOKE_ID'")"
    [[ "$rows" -ge 1 ]] && break
    sleep 10
  done
  [[ "$rows" == 1 ]] || die "expected 1 loaded row from gs://$SMOKE_LANDING/$SMOKE_OBJECT, got $rows"
  echo "file: 1 row loaded into $SMOKE_DATASET.lineas_pedido"
  gcloud storage ls "gs://$SMOKE_QUARANTINE/cuarentena/**" --project="$PROJECT_ID" | grep "smoke-$stamp" >/dev/null ||
    die "no quarantine file for $SMOKE_OBJECT"

  # An order made now; the EARLY pane appears at the first tick at least
  # EARLY_DELAY (60 s) after it arrived.
  now="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  order="{\"pedido_id\":\"$SMOKE_ID\",\"cliente_id\":\"C-SMOKE\",\"pais\":\"$SMOKE_COUNTRY\",\"importe_total\":\"0.01\",\"lineas\":[{\"sku\":\"$SMOKE_SKU\",\"cantidad\":1,\"precio_unitario\":\"0.01\"}]}"
  gcloud pubsub topics publish "$(tf output -raw orders_topic)" --project="$PROJECT_ID" \
    --message="$order" --attribute="momento_evento=$now"

  rows=0
  for _ in $(seq 1 12); do
    gcloud scheduler jobs run alpipe-watermark-tick --project="$PROJECT_ID" --location="$REGION" >/dev/null
    rows="$(bq_scalar "SELECT COUNT(*) FROM \`$SMOKE_DATASET.ventas_hora_pais\` WHERE pais = '$SMOKE_COUNTRY' AND window_start = TIMESTAMP_TRUNC(TIMESTAMP('$now'), HOUR)")"
    [[ "$rows" -ge 1 ]] && break
    sleep 20
  done
  [[ "$rows" -ge 1 ]] || die "no pane for $SMOKE_COUNTRY in the current hour after 4 minutes"
  bq query --project_id="$PROJECT_ID" --use_legacy_sql=false \
    "SELECT window_start, pais, importe, pedidos, unidades, timing, pane_index FROM \`$SMOKE_DATASET.ventas_hora_pais\` WHERE pais = '$SMOKE_COUNTRY' AND window_start = TIMESTAMP_TRUNC(TIMESTAMP('$now'), HOUR)"
  echo "smoke test passed"
}

main() {
  parse_args "$@"
  need gcloud terraform bq
  # Once per run: a modified tree's tag carries the time, and the build and
  # deploy steps of one run must name the same image.
  TAG="$(image_tag)"
  local step
  for step in "${STEPS[@]}"; do
    "step_$step"
  done
}

main "$@"
