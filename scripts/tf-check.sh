#!/usr/bin/env bash
# Offline checks of the deployment code, run by the repository's test command:
#   1. terraform fmt -check -recursive terraform
#   2. tflint v0.64.0 with its bundled Terraform-language rules (terraform/.tflint.hcl)
#   3. tfsec v1.26.0 (checks compiled in, --no-module-downloads), on a copy of
#      the module without its import blocks, which this tfsec cannot parse
#   4. terraform validate and terraform test (terraform/tests/*.tftest.hcl,
#      against mock_provider "google" with the real provider's schema)
#   5. shellcheck of the deploy scripts, when shellcheck is installed
# tflint and tfsec are built once from the Go module proxy into .cache/bin
# (about 5 minutes on 2 cores) and reused afterwards, offline. Both scanners
# run twice: with the defaults (no image: an infrastructure apply) and with
# terraform/testdata/deployed.tfvars (an image: a deployment), which must
# declare the same resources (test/deploy checks it) but evaluate some
# values differently. Any finding fails the script.
#
# terraform validate and test need the hashicorp/google provider: from the
# filesystem mirror in ../shared/terraform when it sits beside the
# repository (offline), else from the registry, cached in .cache/terraform.
# They run on a scratch copy of terraform/ (next to a link to internal/,
# which the module reads), so that neither .terraform/ nor a lock file is
# written into the repository: the mirror's provider is not byte-identical
# to the registry's release, and its hashes in a committed
# .terraform.lock.hcl would make production's terraform init refuse the
# official one.
#
# Usage: scripts/tf-check.sh            Environment: TF_CHECK_BIN (default <repo>/.cache/bin)

set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BIN="${TF_CHECK_BIN:-$ROOT/.cache/bin}"
TF_DIR="$ROOT/terraform"
DEPLOYED_VARS="testdata/deployed.tfvars" # relative to terraform/

TFLINT_MODULE=github.com/terraform-linters/tflint
TFLINT_VERSION=v0.64.0
TFSEC_MODULE=github.com/aquasecurity/tfsec
TFSEC_PACKAGE=github.com/aquasecurity/tfsec/cmd/tfsec
TFSEC_VERSION=v1.26.0

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
  echo "(downloads and compiles its modules: about 1-3 minutes the first time; one line when done)"
  # go prints a "go: downloading" line per module (about a hundred for
  # tflint): kept out of the way, shown only if the build fails.
  local log
  log=$(mktemp)
  if ! GOBIN="$BIN" GOFLAGS=-buildvcs=false go install "$package@$version" >"$log" 2>&1; then
    cat "$log" >&2
    rm -f "$log"
    return 1
  fi
  rm -f "$log"
  printf '%s %s built in %ds\n' "$name" "$version" $((SECONDS - start))
}

ensure_tool tflint "$TFLINT_MODULE" "$TFLINT_MODULE" "$TFLINT_VERSION"
ensure_tool tfsec "$TFSEC_MODULE" "$TFSEC_PACKAGE" "$TFSEC_VERSION"

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

step "tflint $TFLINT_VERSION (bundled terraform ruleset, preset all)"
(
  cd "$TF_DIR"
  "$BIN/tflint" --format compact --config .tflint.hcl
  "$BIN/tflint" --format compact --config .tflint.hcl --var-file "$DEPLOYED_VARS"
)
echo "tflint: no issues"

step "tfsec $TFSEC_VERSION"
# tfsec v1.26.0 predates import blocks (Terraform 1.5) and refuses to parse
# the module with one ("Blocks of type \"import\" are not expected here"). It
# scans a copy without them: an import block creates and configures nothing,
# it only adopts an existing object, and the resource it adopts into is
# scanned as configured. The copy sits next to a link to internal/, which
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
  awk '/^import \{/ { skip = 1 } !skip { print } skip && /^\}/ { skip = 0 }' "$f" >"$f.scan"
  mv "$f.scan" "$f"
done
if grep -q '^import' "$SCAN_DIR"/*.tf; then
  echo "tfsec: import blocks left in the scan copy" >&2
  exit 1
fi
# --soft-fail is never used: any unignored finding fails. Justified ignores
# are inline #tfsec:ignore:<rule> comments and are listed by --include-ignored.
for vars in "" "$DEPLOYED_VARS"; do
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
# terraform test destroys what its runs applied, and prevent_destroy (which
# no variable can switch off) would fail that teardown of the mock state.
# An override file, in the scratch copy only, lifts it for the tests. No
# test run can observe a lifecycle setting: test/deploy checks
# prevent_destroy in the module's text.
awk '/^resource "[^"]+" "[^"]+" \{/ { addr = $2 " " $3 }
  /^[[:space:]]*prevent_destroy[[:space:]]*=[[:space:]]*true/ {
    printf "resource %s {\n  lifecycle {\n    prevent_destroy = false\n  }\n}\n\n", addr
  }' "$TF_DIR"/*.tf >"$TF_WORK/terraform/teardown_override.tf"
(
  export TF_CLI_CONFIG_FILE="$TF_WORK/terraform.rc" TF_IN_AUTOMATION=1 CHECKPOINT_DISABLE=1
  cd "$TF_WORK/terraform"
  terraform init -backend=false -input=false -no-color >/dev/null
  terraform validate -no-color
  start=$SECONDS
  terraform test -no-color
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
