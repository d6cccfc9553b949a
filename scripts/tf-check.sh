#!/usr/bin/env bash
# Offline checks of the deployment code, run by the repository's test command:
#   1. terraform fmt -check -recursive terraform
#   2. terraform-docs v0.20.0 in check mode: the inputs and outputs tables of
#      terraform/README.md are the ones the code generates
#      (terraform/.terraform-docs.yml; regenerate with
#      .cache/bin/terraform-docs terraform)
#   3. tflint v0.64.0 with its bundled Terraform-language rules (terraform/.tflint.hcl)
#   4. tfsec v1.26.0 (checks compiled in, --no-module-downloads), on a copy of
#      the module without its import and check blocks, which this tfsec
#      cannot parse
#   5. terraform validate and terraform test: terraform/tests/*.tftest.hcl,
#      then tests/dev with env/dev.tfvars.example and tests/prod with
#      env/prod.tfvars (each environment's own variables), against
#      mock_provider "google" with the real provider's schema
#   6. shellcheck of the deploy scripts, when shellcheck is installed
# terraform-docs, tflint and tfsec are built once from the Go module proxy
# into .cache/bin (about 5 minutes each on 2 cores) and reused afterwards,
# offline. Both scanners run three times: with the defaults (no image: an
# infrastructure apply), with terraform/testdata/deployed.tfvars (an image:
# a dev deployment), which must declare the same resources (terraform test
# checks it) but evaluate some values differently, and with production's
# env/prod.tfvars. Any finding fails the script.
#
# terraform validate and test need the hashicorp/google provider: from the
# filesystem mirror in ../shared/terraform when it sits beside the
# repository (offline), else from the registry, cached in .cache/terraform.
# They run on a scratch copy of terraform/ (next to a link to internal/,
# which the module reads), so that neither .terraform/ nor a lock file is
# written into the repository: the mirror's provider is not byte-identical
# to the registry's release, and its hashes in a committed
# .terraform.lock.hcl would make production's terraform init refuse the
# official one. Only dev environments are applied by the tests, and
# terraform test destroys them at the end: production's guards
# (prevent_destroy, environment.tf) would refuse that, so prod is planned
# only.
#
# Usage: scripts/tf-check.sh [--tools]  (--tools: build the three tools, check nothing)
# Environment: TF_CHECK_BIN (default <repo>/.cache/bin)

set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BIN="${TF_CHECK_BIN:-$ROOT/.cache/bin}"
TF_DIR="$ROOT/terraform"
DEPLOYED_VARS="testdata/deployed.tfvars" # relative to terraform/
PROD_VARS="env/prod.tfvars"
DEV_VARS="env/dev.tfvars.example"

TFLINT_MODULE=github.com/terraform-linters/tflint
TFLINT_VERSION=v0.64.0
TFSEC_MODULE=github.com/aquasecurity/tfsec
TFSEC_PACKAGE=github.com/aquasecurity/tfsec/cmd/tfsec
TFSEC_VERSION=v1.26.0
TFDOCS_MODULE=github.com/terraform-docs/terraform-docs
TFDOCS_VERSION=v0.20.0

step() { printf '\n--- %s\n' "$*"; }

# built_version BINARY MODULE prints the module version a Go binary was built
# from, or nothing.
built_version() {
  [[ -x "$1" ]] || return 0
  go version -m "$1" 2>/dev/null | awk -v mod="$2" '$1 == "mod" && $2 == mod { print $3 }'
}

# ensure_tool NAME MODULE PACKAGE VERSION builds the tool unless the cached
# binary already is that version (so a version bump rebuilds it).
ensure_tool() {
  local name="$1" module="$2" package="$3" version="$4"
  if [[ "$(built_version "$BIN/$name" "$module")" == "$version" ]]; then
    return 0
  fi
  step "building $name $version into $BIN (first run only)"
  mkdir -p "$BIN"
  local start=$SECONDS
  echo "(downloads and compiles its modules: about 1-5 minutes the first time; one line when done)"
  # go prints a "go: downloading" line per module (about a hundred for
  # tflint): kept out of the way, shown only if the build fails.
  local log work
  log=$(mktemp)
  # The proxy refuses the version list of terraform-docs (403), which
  # `go install pkg@version` reads to look for a deprecation notice; a
  # throwaway module requiring exactly that version builds the same binary
  # (the tool's own go.mod decides every dependency: it has no replace
  # directive) without that lookup.
  work=$(mktemp -d)
  if ! (
    cd "$work" &&
      printf 'module tfcheckbuild\n\ngo 1.24\n' >go.mod &&
      GOFLAGS=-mod=mod go get "$package@$version" &&
      GOFLAGS=-buildvcs=false go build -trimpath -o "$BIN/$name" "$package"
  ) >"$log" 2>&1; then
    cat "$log" >&2
    rm -rf "$log" "$work"
    return 1
  fi
  rm -rf "$log" "$work"
  printf '%s %s built in %ds\n' "$name" "$version" $((SECONDS - start))
}

ensure_tool tflint "$TFLINT_MODULE" "$TFLINT_MODULE" "$TFLINT_VERSION"
ensure_tool tfsec "$TFSEC_MODULE" "$TFSEC_PACKAGE" "$TFSEC_VERSION"
ensure_tool terraform-docs "$TFDOCS_MODULE" "$TFDOCS_MODULE" "$TFDOCS_VERSION"
[[ "${1:-}" != "--tools" ]] || exit 0

step "terraform fmt -check -recursive terraform"
if command -v terraform >/dev/null 2>&1; then
  # The CLI configuration is irrelevant to fmt; do not warn about a missing one.
  TF_CLI_CONFIG_FILE=/dev/null terraform fmt -check -recursive -diff "$TF_DIR"
else
  # No Terraform binary on this machine: the same formatter (hclwrite, which
  # terraform fmt is built on) is applied by a Go test.
  echo "terraform not installed: checking the formatting with test/deploy's TestTerraformIsFormatted"
  (cd "$ROOT" && go test -count=1 -run '^TestTerraformIsFormatted$' ./test/deploy)
fi

step "terraform-docs $TFDOCS_VERSION: terraform/README.md's inputs and outputs tables"
if ! "$BIN/terraform-docs" --output-check "$TF_DIR" >/dev/null; then
  echo "terraform/README.md's tables differ from the code: regenerate them with .cache/bin/terraform-docs terraform" >&2
  exit 1
fi
echo "terraform-docs: the tables are the code's"

step "tflint $TFLINT_VERSION (bundled terraform ruleset, preset all)"
(
  cd "$TF_DIR"
  "$BIN/tflint" --format compact --config .tflint.hcl
  "$BIN/tflint" --format compact --config .tflint.hcl --var-file "$DEPLOYED_VARS"
  "$BIN/tflint" --format compact --config .tflint.hcl --var-file "$PROD_VARS"
)
echo "tflint: no issues"

step "tfsec $TFSEC_VERSION"
# tfsec v1.26.0 predates import and check blocks (Terraform 1.5) and refuses
# to parse the module with one ("Blocks of type \"import\" are not expected
# here"). It scans a copy without them: neither creates nor configures
# anything (an import block adopts an existing object, and the resource it
# adopts into is scanned as configured; a check block only warns). The copy sits next to a link to internal/, which
# the module reads (file("${path.module}/../internal/...")); findings name
# the copy's files, which have the module's names.
SCAN_ROOT="$(mktemp -d)"
trap 'rm -rf "$SCAN_ROOT"' EXIT
SCAN_DIR="$SCAN_ROOT/terraform"
mkdir "$SCAN_DIR"
cp -R "$TF_DIR/." "$SCAN_DIR/"
ln -s "$ROOT/internal" "$SCAN_ROOT/internal"
for f in "$SCAN_DIR"/*.tf; do
  # terraform fmt (checked above) puts a top-level block's braces in column 0.
  awk '/^(import \{|check ")/ { skip = 1 } !skip { print } skip && /^\}/ { skip = 0 }' "$f" >"$f.scan"
  mv "$f.scan" "$f"
done
if grep -Eq '^(import|check) ' "$SCAN_DIR"/*.tf; then
  echo "tfsec: import or check blocks left in the scan copy" >&2
  exit 1
fi
# --soft-fail is never used: any unignored finding fails. Justified ignores
# are inline #tfsec:ignore:<rule> comments and are listed by --include-ignored.
for vars in "" "$DEPLOYED_VARS" "$PROD_VARS"; do
  args=(--no-module-downloads --no-color --concise-output --exclude-downloaded-modules)
  if [[ -n "$vars" ]]; then
    args+=(--tfvars-file "$SCAN_DIR/$vars")
  fi
  # tfsec's own "No problems detected!" would print once per variable set
  # without saying which; one line each, naming the set, instead.
  if ! out=$("$BIN/tfsec" "$SCAN_DIR" "${args[@]}" 2>&1); then
    echo "$out" >&2
    exit 1
  fi
  echo "tfsec: no problems with ${vars:-the default variables}"
done

step "terraform validate and terraform test"
if ! command -v terraform >/dev/null 2>&1; then
  echo "terraform not installed: terraform validate and terraform test cannot run (install Terraform >= 1.9)" >&2
  exit 1
fi
TF_WORK="$SCAN_ROOT/tf"
mkdir -p "$TF_WORK/terraform"
# Without a working directory someone may have initialised in terraform/.
tar -C "$TF_DIR" --exclude=./.terraform --exclude=./.terraform.lock.hcl -cf - . | tar -C "$TF_WORK/terraform" -xf -
ln -s "$ROOT/internal" "$TF_WORK/internal"
MIRROR="$ROOT/../shared/terraform"
if [[ -f "$MIRROR/cliconfig" ]]; then
  echo "provider: filesystem mirror $(cd "$MIRROR" && pwd)"
  sh "$MIRROR/cliconfig" >"$TF_WORK/terraform.rc"
else
  echo "provider: registry (no ../shared/terraform), cached in .cache/terraform/plugins"
  mkdir -p "$ROOT/.cache/terraform/plugins"
  printf 'plugin_cache_dir = "%s"\n' "$ROOT/.cache/terraform/plugins" >"$TF_WORK/terraform.rc"
fi
(
  export TF_CLI_CONFIG_FILE="$TF_WORK/terraform.rc" TF_IN_AUTOMATION=1 CHECKPOINT_DISABLE=1
  cd "$TF_WORK/terraform"
  terraform init -backend=false -input=false -no-color >/dev/null
  terraform validate -no-color
  start=$SECONDS
  terraform test -no-color
  # Each environment's tests with its own variables, as deploy.sh passes them.
  terraform test -no-color -test-directory=tests/dev -var-file="$DEV_VARS"
  terraform test -no-color -test-directory=tests/prod -var-file="$PROD_VARS"
  printf 'terraform test took %ds\n' $((SECONDS - start))
)

step "shellcheck"
if command -v shellcheck >/dev/null 2>&1; then
  shellcheck "$ROOT/scripts/deploy.sh" "$ROOT/scripts/tf-check.sh"
  echo "shellcheck: no issues"
else
  echo "shellcheck not installed: skipped (bash -n runs in test/deploy's tests)"
fi

step "terraform checks passed"
