#!/usr/bin/env bash
# The production-parity stack (test/stack): the production binary
# (cmd/server, CGO_ENABLED=0) once per Cloud Run service of terraform/, each
# with exactly the environment Terraform gives it, on the Firestore and
# Pub/Sub emulators, the in-process fake GCS with Eventarc's deliveries, the
# BigQuery fake (in front of the BigQuery emulator, which runs the SQL) and a
# Cloud Scheduler loop. It starts the emulators (unless
# FIRESTORE_EMULATOR_HOST and PUBSUB_EMULATOR_HOST are already set, as in
# scripts/test.sh), runs the stack's proofs verbosely and prints how long
# they took.
#
#   scripts/stack.sh              the proofs (about 2 minutes, of which the
#                                 first build of cmd/server without cgo)
#   scripts/stack.sh up           start the stack and keep it running for a
#                                 person, printing its URLs, the commands to
#                                 try and how to list what BigQuery holds;
#                                 on the story's clock (2026-03-14 20:30 UTC,
#                                 moving with the real one); Ctrl-C stops it
#   scripts/stack.sh -run Crash   extra arguments go to `go test`
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ -z "${FIRESTORE_EMULATOR_HOST:-}" || -z "${PUBSUB_EMULATOR_HOST:-}" ]]; then
	# shellcheck source=scripts/lib/emulators.sh
	source scripts/lib/emulators.sh
	start_emulators
fi

if [[ "${1:-}" == "up" ]]; then
	shift
	echo "== building cmd/server (CGO_ENABLED=0) and the stack; about 2 minutes the first time, seconds after"
	STACK_UP=1 go test -count=1 -v -timeout 0 -run '^TestUp$' "$@" ./test/stack/
	exit 0
fi

echo "== go test ./test/stack/ (production binary, Terraform's environment, emulators)"
start=$SECONDS
# -parallel 4: each proof runs its own stack (a project of its own) and
# mostly waits on the emulators; the dead-letter proof alone waits ~95 s.
go test -count=1 -v -parallel 4 -timeout 6m "$@" ./test/stack/
echo "== stack proofs passed in $((SECONDS - start)) s"
