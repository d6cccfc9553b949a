#!/usr/bin/env bash
# The end-to-end run on real parts (internal/e2e): starts the gcloud
# Firestore and Pub/Sub emulators on free ports, runs the end-to-end test
# against them, and stops them whatever happens.
#
# The test starts the functions locally (functions framework, fake GCS,
# DuckDB), creates topic pedidos-nuevos with a push subscription to
# AggregateOrders on the emulator, and plays the Step 1 and Step 2 demo
# stories, expecting the embedded demo's results. scripts/test.sh runs the
# same test among all the others; this script runs it alone, verbosely.
#
#   scripts/e2e.sh                 the whole run
#   scripts/e2e.sh -run X          extra arguments go to `go test`
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v gcloud >/dev/null; then
	echo "gcloud is needed for the Firestore and Pub/Sub emulators" >&2
	exit 1
fi

logdir=$(mktemp -d)
pgids=()
cleanup() {
	# Only the process groups started here: other runs use emulators too.
	for pgid in "${pgids[@]:-}"; do
		[[ -n "$pgid" ]] && kill -- "-$pgid" 2>/dev/null || true
	done
	rm -rf "$logdir"
}
trap cleanup EXIT

free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

# start_emulator NAME PORT CMD... : runs CMD in a session of its own, so that
# its Java child goes down with its process group, and waits until PORT
# answers.
start_emulator() {
	local name=$1 port=$2
	shift 2
	setsid "$@" >"$logdir/$name.log" 2>&1 &
	pgids+=("$!")
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

fs_port=$(free_port)
ps_port=$(free_port)
start_emulator firestore "$fs_port" gcloud emulators firestore start --host-port="127.0.0.1:$fs_port" --quiet
start_emulator pubsub "$ps_port" gcloud beta emulators pubsub start --host-port="127.0.0.1:$ps_port" --quiet
export FIRESTORE_EMULATOR_HOST="127.0.0.1:$fs_port"
export PUBSUB_EMULATOR_HOST="127.0.0.1:$ps_port"

echo "== go test ./internal/e2e/ (with emulators)"
start=$SECONDS
go test -count=1 -v -timeout 3m "$@" ./internal/e2e/
echo "== end-to-end run passed in $((SECONDS - start)) s (emulators started before)"
