#!/usr/bin/env bash
# IngestCSV's CPU cost as production runs it: the production binary
# (cmd/server) in the production-parity stack (scripts/stack.sh up), its
# IngestCSV process pinned to one core with taskset, an export of N rows
# (tools/genorders, default 800,000) with one bad row dropped into the
# landing bucket, delivered by the stack's Eventarc. It prints:
#
#   - rows per CPU-second: the rows over the CPU (utime+stime from
#     /proc/PID/stat) the process spent on this file, and over its CPU
#     since it started (start-up included, as a cold Cloud Run instance
#     bills it);
#   - the process's peak RSS (VmHWM, reset before the drop);
#   - the split of that CPU by phase, from a CPU profile of the run taken
#     with `perf record` on the process (cmd/server has no profiling switch;
#     perf samples it from outside, with Go's frame pointers), each sample
#     given to the innermost frame that names a phase;
#   - the profile's top functions (self time).
#
#   scripts/bench-ingest-stack.sh            # starts a stack, drops 800,000 rows, stops it
#   scripts/bench-ingest-stack.sh 800000 3   # three drops (new names) on one stack
#   STACK_LOG=/path/to/up.log scripts/bench-ingest-stack.sh   # a stack already up, its output in that file
#   SERVER_BIN=/tmp/server-old scripts/bench-ingest-stack.sh   # another build of cmd/server (CGO_ENABLED=0)
#
# With SERVER_BIN, the script starts that binary itself with exactly the
# environment of the stack's IngestCSV process (a port of its own), stops
# the stack's process (SIGSTOP) for the measurement so that it cannot take
# the file, and delivers the finalize event to it as Eventarc does; the
# stack's process, resumed, finds the file finished when Eventarc retries.
# BENCH_KEEP=dir keeps the stack's log and the perf data there;
# BENCH_WAIT=seconds bounds the wait for the file's outcome (default 1200).
#
# Needs gcloud's emulators (as scripts/stack.sh) and perf; without perf it
# prints the figures without the split.
set -euo pipefail
cd "$(dirname "$0")/.."
rows=${1:-800000}
runs=${2:-1}

work=$(mktemp -d)
stack_pid=""
cleanup() {
	if [[ -n "$stack_pid" ]]; then
		# scripts/stack.sh runs in a session of its own: stop that group only.
		kill -INT -- "-$stack_pid" 2>/dev/null || true
		for _ in $(seq 1 50); do kill -0 "$stack_pid" 2>/dev/null || break; sleep 0.2; done
		kill -- "-$stack_pid" 2>/dev/null || true
	fi
	rm -rf "$work"
}
trap cleanup EXIT

log=${STACK_LOG:-}
if [[ -z "$log" ]]; then
	log="$work/stack.log"
	echo "== starting the stack (scripts/stack.sh up): about 2 minutes the first time"
	setsid scripts/stack.sh up >"$log" 2>&1 &
	stack_pid=$!
	for _ in $(seq 1 600); do
		grep -q '^Ctrl-C stops it' "$log" && break
		kill -0 "$stack_pid" 2>/dev/null || { cat "$log" >&2; echo "the stack did not start" >&2; exit 1; }
		sleep 1
	done
fi
grep -q '^Ctrl-C stops it' "$log" || { tail -20 "$log" >&2; echo "the stack is not up (no banner in $log)" >&2; exit 1; }
storage=$(grep -o 'STORAGE_EMULATOR_HOST=[^ ]*' "$log" | tail -1 | cut -d= -f2)
landing=$(grep -o 'landing: [^, ]*' "$log" | tail -1 | cut -d' ' -f2)
project=$(grep -o 'alpipe stack up (project [^)]*' "$log" | tail -1 | awk '{print $NF}')

# The IngestCSV process of this stack: the one whose environment names the
# ingest service and this stack's project.
pid=""
for p in /proc/[0-9]*; do
	env=$( { tr "\0" "\n" <"$p/environ"; } 2>/dev/null) || continue
	if grep -qx 'FUNCTION_TARGET=IngestCSV' <<<"$env" && grep -qx "GOOGLE_CLOUD_PROJECT=$project" <<<"$env"; then
		pid=${p#/proc/}
		break
	fi
done
[[ -n "$pid" ]] || { echo "no IngestCSV process of project $project" >&2; exit 1; }
own_pid=""
stack_ingest=""
if [[ -n "${SERVER_BIN:-}" ]]; then
	stack_ingest=$pid
	port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
	mapfile -t envv < <(tr '\0' '\n' <"/proc/$stack_ingest/environ" | grep -v '^PORT=')
	kill -STOP "$stack_ingest"
	env -i "${envv[@]}" PORT="$port" taskset -c 0 "$SERVER_BIN" >"$work/own.log" 2>&1 &
	own_pid=$!
	pid=$own_pid
	ingest_url="http://127.0.0.1:$port"
	for _ in $(seq 1 100); do grep -q '"serving"' "$work/own.log" 2>/dev/null && break; sleep 0.2; done
	log_cat() { sed 's/^/alpipe-ingest | /' "$work/own.log"; }
else
	log_cat() { cat "$log"; }
fi
resume() {
	if [[ -n "$own_pid" ]]; then kill "$own_pid" 2>/dev/null || true; wait "$own_pid" 2>/dev/null || true; fi
	if [[ -n "$stack_ingest" ]]; then kill -CONT "$stack_ingest" 2>/dev/null || true; fi
}
trap 'resume; cleanup' EXIT
taskset -a -p -c 0 "$pid" >/dev/null
echo "== IngestCSV is process $pid ($(readlink "/proc/$pid/exe")), pinned to CPU 0 (all threads)"

# phases reads `perf script -F ip,sym` (one frame a line, innermost first,
# a blank line after each sample) and gives each sample to the innermost
# frame that names a phase; network and runtime only when none does.
phases=$(cat <<'EOF'
import re, sys
specific = [
    ("hash (CRC32C/MD5/SHA)", r"hash/crc32|crypto/md5|crypto/sha256"),
    ("quarantine", r"ingest\.\(\*quarantine\)|ingest\.quarantine"),
    ("ledger (Firestore)", r"internal/ledger|cloud\.google\.com/go/firestore"),
    ("download (read the landed object)", r"storage\.\(\*Reader\)|storage\.\(\*httpReader\)|storage\.readerReopen"),
    ("parse/validate", r"internal/record\.|internal/contract\.|ingest\.\(\*rowSource\)|ingest\.\(\*sizeBound\)|ingest\.\(\*boundedReader\)"),
    ("staging encode (NDJSON)", r"bigquery\.\(\*rowEncoder\)|bigquery\.appendCell|warehouse\.AppendJSONString"),
    ("upload (staging object)", r"storage\.\(\*Writer\)|objects\.\(\*gcsWriter\)|io\.\(\*pipe\)|bufio\.\(\*Writer\)|bigquery\.\(\*Warehouse\)\.stage|gensupport\."),
]
general = [
    ("network (HTTP, syscalls) under no phase", r"net/http|^net\.|internal/poll|syscall\.|golang\.org/x/net"),
    ("GC (background)", r"runtime\.gcBgMarkWorker|runtime\.bgsweep|runtime\.bgscavenge|runtime\.gcDrain"),
]
specific = [(n, re.compile(p)) for n, p in specific]
general = [(n, re.compile(p)) for n, p in general]
counts, total, frames = {}, 0, []
def phase(frames):
    for group in (specific, general):
        for f in frames:
            for n, p in group:
                if p.search(f):
                    return n
    return "other (runtime, start-up, logging, ...)"
def flush():
    global total, frames
    if frames:
        total += 1
        n = phase(frames)
        counts[n] = counts.get(n, 0) + 1
    frames = []
for line in sys.stdin:
    line = line.strip()
    if not line:
        flush()
        continue
    parts = line.split(None, 1)
    frames.append(parts[1] if len(parts) > 1 else parts[0])
flush()
print(f"-- CPU by phase (perf profile of the process, {total} samples at 499 Hz):")
for n, c in sorted(counts.items(), key=lambda kv: -kv[1]):
    print(f"   {100*c/total:5.1f}%  {n}")
EOF
)

file="$work/pedidos-$rows.csv"
go build -o "$work/genorders" ./tools/genorders
tck=$(getconf CLK_TCK)
cpu() { awk -v t="$tck" '{printf "%.2f", ($14+$15)/t}' "/proc/$pid/stat"; }

for run in $(seq 1 "$runs"); do
	stamp=$(date +%s%N)
	name="exportaciones/2026/03/14/bench-$stamp-$rows.csv"
	# Content of its own (order numbers), or the ledger takes it for a copy
	# of an earlier drop and skips it.
	"$work/genorders" -rows "$rows" -bad 1 -orders-from "${stamp:0:12}" -o "$file"
	mb=$(python3 -c "import os; print(f'{os.path.getsize(\"$file\")/1e6:.1f}')")
	# Peak RSS of this drop, not of earlier ones.
	echo 5 >"/proc/$pid/clear_refs"
	perf_pid=""
	if command -v perf >/dev/null; then
		perf record -q -F 499 -g -p "$pid" -o "$work/perf.data" >/dev/null 2>&1 &
		perf_pid=$!
		sleep 0.5
	fi
	before=$(cpu)
	start=$(date +%s.%N)
	obj=$(curl -fsS -X POST --data-binary "@$file" -H 'Content-Type: text/csv' \
		"http://$storage/upload/storage/v1/b/$landing/o?uploadType=media&name=$name")
	if [[ -n "$own_pid" ]]; then
		# Eventarc's binary-mode CloudEvent: the object resource as
		# StorageObjectData (int64 fields as strings), Eventarc's headers.
		data=$(python3 -c 'import json,sys
o=json.loads(sys.argv[1]); o.pop("acl",None); o.pop("owner",None)
for k in ("generation","metageneration","size"):
    if k in o: o[k]=str(o[k])
print(json.dumps(o))' "$obj")
		curl -fsS -o /dev/null -X POST "$ingest_url/" -H "Ce-Id: bench-$run-$$" \
			-H "Ce-Source: //storage.googleapis.com/projects/_/buckets/$landing" -H "Ce-Subject: objects/$name" \
			-H "Ce-Type: google.cloud.storage.object.v1.finalized" -H "Ce-Specversion: 1.0" \
			-H "Ce-Time: $(date -u +%Y-%m-%dT%H:%M:%SZ)" -H "Ce-Bucket: $landing" \
			-H "Content-Type: application/json; charset=utf-8" --data-binary "$data" &
		# (answered when the file is done: waited for through the log)
	fi
	done_line=""
	for _ in $(seq 1 $((2 * ${BENCH_WAIT:-1200}))); do
		done_line=$(log_cat | grep -F "$name" | grep -E '^alpipe-ingest \| (WARNING |ERROR )?file |"(msg|message)":"file ' | tail -1) || true
		[[ -n "$done_line" ]] && break
		sleep 0.5
	done
	end=$(date +%s.%N)
	after=$(cpu)
	rss=$(awk '/VmHWM/ {printf "%.0f MiB", $2/1024}' "/proc/$pid/status")
	if [[ -n "$perf_pid" ]]; then
		kill -INT "$perf_pid" 2>/dev/null || true
		wait "$perf_pid" 2>/dev/null || true
	fi
	# The stand-in's load job can take far longer than IngestCSV's own work
	# (its GoogleSQL engine stores the rows): past BENCH_WAIT seconds the
	# figures are printed as they stand, without the outcome.
	[[ -n "$done_line" ]] || done_line="(no outcome logged within ${BENCH_WAIT:-1200} s: the figures below are the CPU so far)"
	echo
	echo "== drop $run: $rows rows ($mb MB), one bad row"
	[[ "$done_line" == "("* ]] && echo "$done_line"
	{ echo "$done_line" | grep -oE '"?(state|rows_read|rows_loaded|rows_quarantined|load_ms|refresh_ms|duration_ms)"?[=:]"?[^ ,"]*' || true; } | tr -d '"' | paste -sd' '
	python3 - "$rows" "$before" "$after" "$start" "$end" "$rss" <<'EOF'
import sys
rows, before, after, start, end, rss = sys.argv[1:]
rows = int(rows); cpu = float(after) - float(before); total = float(after)
if cpu <= 0:
    sys.exit("the process spent no CPU on the file: it did not take it (see its log)")
print(f"CPU for this file: {cpu:.2f} s -> {rows/cpu:,.0f} rows per CPU-second")
print(f"CPU since start-up: {total:.2f} s -> {rows/total:,.0f} rows per CPU-second (valid for the first drop of a fresh stack)")
print(f"wall: {float(end)-float(start):.1f} s (upload, Eventarc, load job on the BigQuery stand-in, refresh); peak RSS (VmHWM): {rss}")
EOF
	if [[ -n "${BENCH_KEEP:-}" ]]; then
		mkdir -p "$BENCH_KEEP"
		cp "$log" "$BENCH_KEEP/stack.log" 2>/dev/null || true
		cp "$work/own.log" "$BENCH_KEEP/own.log" 2>/dev/null || true
		cp "$work/perf.data" "$BENCH_KEEP/perf-$run.data" 2>/dev/null || true
	fi
	if [[ -n "$perf_pid" && -s "$work/perf.data" ]]; then
		perf script -i "$work/perf.data" -F ip,sym 2>/dev/null | python3 -c "$phases"
		echo "-- top functions (self), perf report:"
		perf report -i "$work/perf.data" --stdio --no-children --sort sym -g none 2>/dev/null |
			grep -E '^ +[0-9]' | head -15
	fi
done
