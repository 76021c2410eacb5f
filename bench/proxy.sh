#!/usr/bin/env bash
# Egress proxy throughput and connection cost: a 200 MB download from a loopback server
# directly, through a CONNECT tunnel and as a plain forwarded request (both entering through
# Forward's 127.0.0.1 port and the proxy's unix socket, as from inside a sandbox), interleaved
# in one run; then the same download with the server paced at 400 MB/s (a fast real link).
# Prints medians: MB/s, the ratio to direct, CPU time per download (client, proxy and server
# share one process, so CPU is the load-independent figure), and the time of a new connection
# with a small request.
#   bench/proxy.sh            (RUNS=9 by default)
set -euo pipefail
cd "$(dirname "$0")/.."
go test -run '^$' -bench '^BenchmarkProxy$' -benchtime "${RUNS:-9}x" ./proxy/ |
	sed -n '/200 MB download/,/^PASS/p' | grep -v '^PASS' | sed 's/^ *//'
echo "machine: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
