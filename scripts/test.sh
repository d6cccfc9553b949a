#!/usr/bin/env bash
# The one test command (README, .ci/run and cloudbuild.yaml all call it).
#
# Starts the gcloud Firestore and Pub/Sub emulators on free ports, runs
# gofmt, go vet and every Go test against them (unit, conformance suites,
# emulator and end-to-end tests), runs the offline Terraform checks, and
# stops the emulators whatever happens.
#
#   scripts/test.sh            everything
#   scripts/test.sh -short     no emulators: what `go test -short ./...` runs
#
# Extra arguments go to `go test` (e.g. scripts/test.sh -run Ingest ./internal/ingest/).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

short=0
if [[ "${1:-}" == "-short" ]]; then
	short=1
	shift
fi
pkgs=("$@")
[[ ${#pkgs[@]} -gt 0 ]] || pkgs=(./...)

logdir=$(mktemp -d)
pids=()
cleanup() {
	for pgid in "${pids[@]:-}"; do
		[[ -n "$pgid" ]] && kill -- "-$pgid" 2>/dev/null || true
	done
	rm -rf "$logdir"
}
trap cleanup EXIT

free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

# start_emulator NAME PORT CMD... : runs CMD in its own process group so that
# the Java child goes down with it, and waits until PORT answers.
start_emulator() {
	local name=$1 port=$2
	shift 2
	setsid "$@" >"$logdir/$name.log" 2>&1 &
	pids+=("$!")
	for _ in $(seq 1 120); do
		if curl -fs "http://127.0.0.1:$port" >/dev/null 2>&1; then
			echo "emulator $name ready on 127.0.0.1:$port"
			return 0
		fi
		sleep 0.5
	done
	echo "emulator $name did not start; its log:" >&2
	cat "$logdir/$name.log" >&2
	return 1
}

echo "== gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './.cache/*'))
if [[ -n "$unformatted" ]]; then
	echo "gofmt would change: $unformatted" >&2
	exit 1
fi

echo "== go vet"
go vet ./...

if [[ $short -eq 1 ]]; then
	echo "== go test -short"
	go test -short -count=1 "${pkgs[@]}"
	exit 0
fi

if ! command -v gcloud >/dev/null; then
	echo "gcloud is needed for the Firestore and Pub/Sub emulators (or run scripts/test.sh -short)" >&2
	exit 1
fi
fs_port=$(free_port)
ps_port=$(free_port)
start_emulator firestore "$fs_port" gcloud emulators firestore start --host-port="127.0.0.1:$fs_port" --quiet
start_emulator pubsub "$ps_port" gcloud beta emulators pubsub start --host-port="127.0.0.1:$ps_port" --quiet
export FIRESTORE_EMULATOR_HOST="127.0.0.1:$fs_port"
export PUBSUB_EMULATOR_HOST="127.0.0.1:$ps_port"
export ALPIPE_TEST_EMULATORS=1

echo "== go test (with emulators)"
go test -count=1 -timeout 20m "${pkgs[@]}"

if [[ -x scripts/tf-check.sh && ${#@} -eq 0 ]]; then
	echo "== terraform offline checks"
	scripts/tf-check.sh
fi
echo "== all checks passed"
