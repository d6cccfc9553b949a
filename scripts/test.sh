#!/usr/bin/env bash
# The one test command: the README's and the one .ci/run calls. Cloud Build
# (cloudbuild.yaml) does not call it: its build has no gcloud emulators on
# the machine, so it runs the Go part of this script (gofmt, go vet,
# go test ./... against emulator containers) plus terraform fmt and validate;
# the production-parity stack, the browser tests, tflint, tfsec, terraform
# test, the script lint, the go mod tidy check and the leftover-folder check
# run here only.
#
# Starts the gcloud Firestore and Pub/Sub emulators on free ports, runs
# gofmt, go vet and every Go test against them (unit, conformance suites,
# emulator and end-to-end tests, then the production-parity stack through
# scripts/stack.sh), runs the offline Terraform checks, and stops the
# emulators whatever happens.
#
#   scripts/test.sh            everything
#   scripts/test.sh -short     no emulators: what `go test -short ./...` runs
#
# Extra arguments go to `go test` (e.g. scripts/test.sh -run Ingest ./internal/ingest/).
set -euo pipefail
cd "$(dirname "$0")/.."

short=0
if [[ "${1:-}" == "-short" ]]; then
	short=1
	shift
fi
pkgs=("$@")
[[ ${#pkgs[@]} -gt 0 ]] || pkgs=(./...)

echo "== gofmt"
unformatted=$(find . -name '*.go' -not -path './.cache/*' -not -path './.local/*' -print0 | xargs -0 gofmt -l)
if [[ -n "$unformatted" ]]; then
	echo "gofmt would change: $unformatted" >&2
	exit 1
fi

echo "== go vet"
go vet ./...

echo "== go mod tidy"
# go.mod and go.sum must be what the imports need: nothing marked indirect
# that is imported, nothing kept that is not.
if ! tidy=$(go mod tidy -diff 2>&1); then
	printf '%s\n' "$tidy" >&2
	echo "go.mod or go.sum is not tidy: run 'go mod tidy' and commit the result" >&2
	exit 1
fi

echo "== shellcheck"
# Every shell script of the repository. CI installs shellcheck (.ci/run), so
# there a missing shellcheck is a failure, not a skip.
if command -v shellcheck >/dev/null 2>&1; then
	shellcheck .ci/run scripts/*.sh scripts/lib/*.sh
	echo "shellcheck: no findings"
elif [[ "${CI:-}" == "true" ]]; then
	echo "shellcheck is not installed (apt-get install shellcheck); CI requires it" >&2
	exit 1
else
	echo "shellcheck not installed: skipped here (apt-get install shellcheck; CI runs it)"
fi

if [[ $short -eq 1 ]]; then
	echo "== go test -short"
	go test -short -count=1 "${pkgs[@]}"
	exit 0
fi

# shellcheck source=scripts/lib/emulators.sh
source scripts/lib/emulators.sh
start_emulators
# The dashboard's browser test needs Chromium and chromedriver (installed once).
scripts/chromium.sh || echo "Chromium could not be installed: the browser tests will skip (and fail under CI=true)"

echo "== go test (with emulators)"
if [[ ${#@} -eq 0 ]]; then
	# The stack's proofs run once, below, through scripts/stack.sh (verbose,
	# timed, on these emulators), not also here.
	# The BigQuery adapter's package runs beside them, verbose, so that its
	# GoogleSQL summary (statements run on the BigQuery emulator through
	# bqfake, emulator starts) is printed even when it passes.
	# The two longest packages are listed first: go test starts packages
	# in the order given, and on 2 cores a long package started last is
	# the run's long pole.
	long=(./internal/stream ./internal/window)
	mapfile -t rest < <(go list ./... | grep -v -e '/test/stack$' -e '/internal/warehouse/bigquery$' -e '/internal/stream$' -e '/internal/window$')
	pkgs=("${long[@]}" "${rest[@]}")
fi
# The tests run with a temporary folder of their own, so that what they
# leave behind shows: every temporary folder our code or tests create is
# named alpipe-*, and none may outlive its test.
test_tmp=$(mktemp -d)
bq_log="$emulator_logdir/bigquery-adapter.log"
bq_pid=
race_log="$emulator_logdir/race.log"
race_pid=
prebuild_log="$emulator_logdir/prebuild.log"
prebuild_pid=
if [[ ${#@} -eq 0 ]]; then
	# What the stack and the Terraform checks build (cmd/server with
	# CGO_ENABLED=0, tflint, tfsec, terraform-docs: minutes on a fresh
	# machine) is built now at the lowest priority, on the CPU the tests
	# leave idle while they wait on the emulators.
	# Each background job runs in a session of its own, listed with the
	# emulators' so that a run failing before it waits for one stops it.
	setsid -w bash -c 'CGO_ENABLED=0 nice -n 19 go build -o /dev/null ./cmd/server && nice -n 19 scripts/tf-check.sh --tools' >"$prebuild_log" 2>&1 &
	prebuild_pid=$!
	TMPDIR="$test_tmp" setsid -w go test -count=1 -timeout 20m -v ./internal/warehouse/bigquery/ >"$bq_log" 2>&1 &
	bq_pid=$!
	# The packages that serve concurrent requests, again under the race
	# detector, beside the rest: their -short tests exercise the concurrency
	# (first use of the read registry, drains, push budgets, batches); the
	# emulator suites are I/O-bound and would only take longer under -race.
	TMPDIR="$test_tmp" setsid -w go test -race -short -count=1 ./internal/local/ ./internal/warehouse/ ./internal/dashboard/ ./functions/ ./internal/stream/ >"$race_log" 2>&1 &
	race_pid=$!
	emulator_pgids+=("$prebuild_pid" "$bq_pid" "$race_pid")
fi
# One line per package as it finishes, and a "still running" line when
# none has for a minute (tools/testprogress).
go build -o "$emulator_logdir/testprogress" ./tools/testprogress
TMPDIR="$test_tmp" go test -json -count=1 -timeout 20m "${pkgs[@]}" | "$emulator_logdir/testprogress"
if [[ -n "$bq_pid" ]]; then
	if ! wait "$bq_pid"; then
		grep -v -e '^=== ' -e '^    --- PASS' -e '^--- PASS' "$bq_log" >&2
		echo "FAIL	internal/warehouse/bigquery" >&2
		exit 1
	fi
	grep -e '^GoogleSQL:' -e '^ok ' "$bq_log"
fi
if [[ -n "$race_pid" ]]; then
	echo "== go test -race -short (packages serving concurrent requests)"
	if ! wait "$race_pid"; then
		cat "$race_log" >&2
		exit 1
	fi
	cat "$race_log"
fi
# Folders only: DuckDB's spool lock (alpipe-spool.lock) is a marker file
# that stays in a shared temporary folder by design (internal/warehouse/duckdb).
leftover=$(find "$test_tmp" -mindepth 1 -maxdepth 1 -type d -name 'alpipe-*' -printf '%f\n')
others=$(find "$test_tmp" -mindepth 1 -maxdepth 1 ! -name 'alpipe-*' -printf '%f\n')
rm -rf "$test_tmp"
if [[ -n "$others" ]]; then
	echo "note: third-party tools left in the tests' temporary folder: $others"
fi
if [[ -n "$leftover" ]]; then
	echo "the tests left temporary folders behind: $leftover" >&2
	exit 1
fi

if [[ ${#@} -eq 0 ]]; then
	echo "== production-parity stack"
	scripts/stack.sh
fi

if [[ -x scripts/tf-check.sh && ${#@} -eq 0 ]]; then
	echo "== terraform offline checks"
	if ! wait "$prebuild_pid"; then
		cat "$prebuild_log" >&2
		exit 1
	fi
	cat "$prebuild_log"
	scripts/tf-check.sh
fi
echo "== all checks passed"
