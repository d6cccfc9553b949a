#!/usr/bin/env bash
# The end-to-end run on real parts (test/e2e): starts the gcloud
# Firestore and Pub/Sub emulators on free ports, runs the end-to-end test
# against them, and stops them whatever happens.
#
# The test starts the functions locally (alpipe serve's one mux, fake GCS,
# DuckDB), creates topic pedidos-nuevos with a push subscription to
# AggregateOrders on the emulator, and plays the Step 1 and Step 2 demo
# stories, expecting the embedded demo's results. scripts/test.sh runs the
# same test among all the others; this script runs it alone, verbosely.
#
#   scripts/e2e.sh                 the whole run
#   scripts/e2e.sh -run X          extra arguments go to `go test`
set -euo pipefail
cd "$(dirname "$0")/.."

# shellcheck source=scripts/lib/emulators.sh
source scripts/lib/emulators.sh
start_emulators

echo "== go test ./test/e2e/ (with emulators)"
start=$SECONDS
go test -count=1 -v -timeout 3m "$@" ./test/e2e/
echo "== end-to-end run passed (go test: $((SECONDS - start)) s)"
