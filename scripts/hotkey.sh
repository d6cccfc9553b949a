#!/usr/bin/env bash
# Hot-key and uniform load through the production binary on the Firestore
# emulator: starts the emulator (scripts/lib/emulators.sh), the BigQuery fake
# (tools/hotkey bqfake), and cmd/server twice, as the two Cloud Run
# services (FUNCTION_TARGET=AggregateOrders and AdvanceWatermark) with
# STATE_STORE=firestore, WAREHOUSE=bigquery and a test clock. Then, with
# batching on (BATCH_WAIT=10ms, the default) unless told otherwise, and
# every declared aggregation on (ventas_hora_pais; ventas_sku_hora_movil:
# four sliding windows per line; sesiones_cliente: one customer sends every
# order, a hot key of the session aggregation too):
#   1. 2,000 orders of ONE SKU for ONE country (one cell of ventas_hora_pais,
#      four of ventas_sku_hora_movil, one customer's session), 200 requests
#      in flight, each retried on non-2xx as Pub/Sub push would; a tick; the
#      panes must hold exactly 2,000 orders in each aggregation (and in each
#      of the four windows),
#      or the run fails. Target: at least 500 orders/s;
#   2. the same over 30 countries;
#   3. push latency at 1 request in flight (200 orders) with batching on and
#      off (BATCH_WAIT=0), and at 200 in flight (the hot key again, warm);
# It prints, for each load, orders acknowledged per second, and for 1 and 2
# orders COUNTED per second: timed from the first order sent until the
# panes of every aggregation hold every order, the ticks included (an order
# is done for the business when it is in its panes). Also transactions per
# order and latencies as measured.
#
#   scripts/hotkey.sh            # all of the above
#   N=600 scripts/hotkey.sh      # fewer orders
#   ONLY=hot RUNS=3 scripts/hotkey.sh  # the hot key alone, three times,
#                                      # each on a fresh project after a warm-up
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/emulators.sh
N=${N:-2000}
INFLIGHT=${INFLIGHT:-200}
ONLY=${ONLY:-}
RUNS=${RUNS:-1}

work=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	stop_emulators 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT

start_emulators
CGO_ENABLED=0 go build -o "$work/server" ./cmd/server
go build -o "$work/hotkey" ./tools/hotkey

free() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }
wait_http() { # URL LOG
	for _ in $(seq 1 200); do curl -s -o /dev/null "$1" && return 0; sleep 0.05; done
	echo "no answer from $1; its log:" >&2
	cat "$2" >&2
	return 1
}

# start_pair NAME BATCH_WAIT: a fresh project (empty state), a BigQuery fake,
# and the two services; sets ORDERS, TICK and CLOCK.
start_pair() {
	local name=$1 wait=$2
	local project="alpipe-hotkey-$name-$$-$RANDOM"
	"$work/hotkey" bqfake -project "$project" -addr-file "$work/bq-$name" &
	pids+=($!)
	for _ in $(seq 1 100); do [[ -s "$work/bq-$name" ]] && break; sleep 0.05; done
	CLOCK="$work/clock-$name"
	echo "2026-03-14T18:30:00Z" >"$CLOCK"
	local po pt
	po=$(free)
	pt=$(free)
	local env=(STATE_STORE=firestore GOOGLE_CLOUD_PROJECT="$project" WAREHOUSE=bigquery
		BIGQUERY_EMULATOR_HOST="$(cat "$work/bq-$name")" STAGING_BUCKET=alpipe-staging
		# The storage client only stages ingest loads, which this run makes
		# none of; pointing it at the fake spares it looking for credentials.
		STORAGE_EMULATOR_HOST="$(cat "$work/bq-$name")"
		ALPIPE_CLOCK_FILE="$CLOCK" BATCH_WAIT="$wait")
	env "${env[@]}" FUNCTION_TARGET=AggregateOrders PORT="$po" "$work/server" >"$work/orders-$name.log" 2>&1 &
	pids+=($!)
	env "${env[@]}" FUNCTION_TARGET=AdvanceWatermark PORT="$pt" "$work/server" >"$work/tick-$name.log" 2>&1 &
	pids+=($!)
	ORDERS="http://127.0.0.1:$po/"
	TICK="http://127.0.0.1:$pt/"
	wait_http "$ORDERS" "$work/orders-$name.log"
	wait_http "$TICK" "$work/tick-$name.log"
}

# The emulator's JVM is cold at first: the sequential latency run comes
# first and warms it up for the others.
start_pair latency 10ms
"$work/hotkey" load -label "latency, 1 in flight, BATCH_WAIT=10ms" -orders "$ORDERS" -clock "$CLOCK" -n 200 -inflight 1 -keys ES -run lat1

if [[ "$ONLY" != hot ]]; then
	start_pair nobatch 0s
	"$work/hotkey" load -label "latency, 1 in flight, BATCH_WAIT=0 (no batching)" -orders "$ORDERS" -clock "$CLOCK" -n 200 -inflight 1 -keys ES -run nob1
fi

for run in $(seq 1 "$RUNS"); do
	start_pair "hot$run" 10ms
	"$work/hotkey" load -label "hot key, BATCH_WAIT=10ms (run $run)" -orders "$ORDERS" -tick "$TICK" -clock "$CLOCK" -n "$N" -inflight "$INFLIGHT" -keys ES -run hot
done
[[ "$ONLY" == hot ]] && exit 0
"$work/hotkey" load -label "hot key again (latency at $INFLIGHT in flight), BATCH_WAIT=10ms" -orders "$ORDERS" -clock "$CLOCK" -n "$N" -inflight "$INFLIGHT" -keys ES -run hot2

start_pair uniform 10ms
"$work/hotkey" load -label "30 countries, BATCH_WAIT=10ms" -orders "$ORDERS" -tick "$TICK" -clock "$CLOCK" -n "$N" -inflight "$INFLIGHT" -keys uniform30 -run uni
