#!/usr/bin/env bash
# End-to-end ingest benchmark through the local CLI: generates order-line
# exports (default 800,000 and 8,000,000 rows, dirty rows at known lines),
# starts `alpipe serve` on a fresh data folder for each, drops the file
# (upload to the local fake GCS, ingest, DuckDB load, daily aggregate,
# quarantine), and prints wall time, rows/s, MB/s and the server's peak RSS.
#
#   scripts/bench-ingest.sh                 # 800000 8000000
#   scripts/bench-ingest.sh 800000          # one size
set -euo pipefail
cd "$(dirname "$0")/.."
sizes=("$@")
[[ ${#sizes[@]} -gt 0 ]] || sizes=(800000 8000000)

work=$(mktemp -d)
server_pid=""
cleanup() {
	if [[ -n "$server_pid" ]]; then
		kill "$server_pid" 2>/dev/null || true
	fi
	rm -rf "$work"
}
trap cleanup EXIT

go build -o "$work/alpipe" ./cmd/alpipe
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
server="http://127.0.0.1:$port"

printf '%-10s %-9s %-10s %-8s %-12s %-9s %-15s %-20s %s\n' rows MB seconds status rows/s MB/s peakRSS/anon loaded/quarantined "ingest phases (server log)" 
for n in "${sizes[@]}"; do
	file="$work/pedidos-$n.csv"
	go run ./tools/genorders -rows "$n" -o "$file" >/dev/null
	mb=$(python3 -c "import os; print(f'{os.path.getsize(\"$file\")/1e6:.1f}')")
	data="$work/data-$n"
	"$work/alpipe" serve --addr "127.0.0.1:$port" --data "$data" >"$work/serve-$n.log" 2>&1 &
	server_pid=$!
	for _ in $(seq 1 100); do curl -fs "$server/_local/health" >/dev/null 2>&1 && break; sleep 0.1; done
	# Sample the anonymous resident memory while the drop runs: VmHWM also
	# counts the binary's file-backed pages (~80 MiB of DuckDB and Go text
	# that the kernel can drop and share); RssAnon is what the work costs.
	(
		peak=0
		while kill -0 "$server_pid" 2>/dev/null; do
			a=$(awk '/RssAnon/ {print $2}' "/proc/$server_pid/status" 2>/dev/null)
			if [[ ${a:-0} -gt $peak ]]; then
				peak=$a
				echo "$peak" >"$work/anon-$n"
			fi
			sleep 0.02
		done
	) &
	sampler=$!
	start=$(date +%s.%N)
	# drop exits 1 when any row is quarantined, as the planted bad rows are.
	out=$("$work/alpipe" drop "$file" --object "exportaciones/2026/03/14/pedidos-$n.csv" --format json --server "$server") || [[ $? -eq 1 ]]
	end=$(date +%s.%N)
	# The serve process re-executes itself once (allocator settings), so its
	# PID stays the same; VmHWM is the peak resident size of that process.
	rss=$(awk '/VmHWM/ {printf "%.0fMiB", $2/1024}' "/proc/$server_pid/status")
	kill "$sampler" 2>/dev/null || true
	wait "$sampler" 2>/dev/null || true
	anon=$(awk '{printf "%.0fMiB", $1/1024}' "$work/anon-$n")
	rss="$rss/$anon"
	python3 - "$n" "$mb" "$start" "$end" "$rss" "$out" "$work/serve-$n.log" <<'EOF'
import json, sys
n, mb, start, end, rss, out, log = sys.argv[1:]
rec = json.loads(out)
secs = float(end) - float(start)
c = rec["counts"]
phases = ""
for line in open(log):
    if '"duration_ms"' in line:
        e = json.loads(line)
        phases = f"load {e['load_ms']} ms, aggregate {e['refresh_ms']} ms, ingest total {e['duration_ms']} ms"
print(f"{n:<10} {mb:<9} {secs:<10.2f} {rec['state']:<8} {int(n)/secs:<12,.0f} {float(mb)/secs:<9.1f} {rss:<15} {str(c['loaded'])+'/'+str(c['quarantined']):<20} {phases}")
EOF
	kill "$server_pid"
	wait "$server_pid" 2>/dev/null || true
	server_pid=""
done
