# shellcheck shell=bash
# Sourced by scripts/test.sh and scripts/stack.sh: starts the gcloud Firestore
# and Pub/Sub emulators on free ports, exports FIRESTORE_EMULATOR_HOST and
# PUBSUB_EMULATOR_HOST, and stops them (only the process groups started
# here: other runs may use emulators too) when the shell exits, with any
# other process group the script adds to emulator_pgids.

emulator_logdir=$(mktemp -d)
emulator_pgids=()
stop_emulators() {
	for pgid in "${emulator_pgids[@]:-}"; do
		if [[ -n "$pgid" ]]; then
			# The process itself when its session is not made yet.
			kill -- "-$pgid" 2>/dev/null || kill "$pgid" 2>/dev/null || true
		fi
	done
	rm -rf "$emulator_logdir"
}
trap stop_emulators EXIT
# An interrupted run still stops the emulators: exit through the EXIT trap.
trap 'exit 130' INT TERM

free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

# start_emulator NAME PORT CMD... : runs CMD in a session of its own, so that
# its Java child goes down with its process group, and waits until PORT
# answers.
start_emulator() {
	local name=$1 port=$2
	shift 2
	setsid "$@" >"$emulator_logdir/$name.log" 2>&1 &
	emulator_pgids+=("$!")
	for _ in $(seq 1 120); do
		if curl -fs "http://127.0.0.1:$port" >/dev/null 2>&1; then
			echo "emulator $name ready on 127.0.0.1:$port"
			return 0
		fi
		sleep 0.5
	done
	echo "emulator $name did not start; its log:" >&2
	cat "$emulator_logdir/$name.log" >&2
	return 1
}

start_emulators() {
	if ! command -v gcloud >/dev/null; then
		echo "gcloud is needed for the Firestore and Pub/Sub emulators (or run scripts/test.sh -short)" >&2
		return 1
	fi
	local fs_port ps_port
	fs_port=$(free_port)
	ps_port=$(free_port)
	start_emulator firestore "$fs_port" gcloud emulators firestore start --host-port="127.0.0.1:$fs_port" --quiet
	start_emulator pubsub "$ps_port" gcloud beta emulators pubsub start --host-port="127.0.0.1:$ps_port" --quiet
	export FIRESTORE_EMULATOR_HOST="127.0.0.1:$fs_port"
	export PUBSUB_EMULATOR_HOST="127.0.0.1:$ps_port"
}
