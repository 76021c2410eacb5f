#!/usr/bin/env bash
# The egress proxy against direct connections, side by side in one run: curl in a sandbox
# fetching from a loopback HTTP/1.1 server (bench/httpserver) directly (`--net host`), as plain
# forwarded requests (curl -x, the way HTTP_PROXY sends http:// URLs) and through a CONNECT
# tunnel (curl -p -x, the way HTTPS goes), in interleaved hyperfine rounds:
#   small  1000 small requests on one kept connection (curl's URL range [1-1000])
#   big    one 100 MB download, as fast as the server writes it: the CPU is the limit
#   paced  the same at 400 MB/s (3.2 Gbit/s): the network is the limit, as on a real link
# Every run starts a sandbox; direct pays that too, so the ratios are the proxy's alone. Prints
# pooled medians, the ratios the proxy's targets are stated in (small: forward / CONNECT rate;
# big: proxy / direct throughput), the mean CPU time of a run (curl, jail and the proxy; not
# the server's), and how busy other work kept the machine before and after.
#   bench/proxy.sh [path/to/jail]      ROUNDS (10) x RUNS (3) per command; needs hyperfine jq curl go
# For the proxy alone, in one process with CPU per download: go test -run '^$' -bench Proxy ./proxy/
set -euo pipefail
bench=$(realpath "$(dirname "$0")")
. "$bench/lib.sh"
jail=$(bench_jail "${1:-}")
need hyperfine jq curl go

work=$(mktemp -d /tmp/jail-bench-proxy.XXXXXX)
server=
trap '[ -n "$server" ] && kill "$server"; rm -rf "$work"' EXIT
httpserver "$work"

# busy prints the share of the CPUs other work kept busy over a second (nothing of the
# benchmark's runs then), and the load average (which counts tasks blocked in the kernel too).
busy() {
	local a b
	read -ra a < <(head -1 /proc/stat)
	sleep 1
	read -ra b < <(head -1 /proc/stat)
	awk -v a="${a[*]}" -v b="${b[*]}" 'BEGIN {
		n = split(a, x); split(b, y); t = 0
		for (i = 2; i <= n; i++) t += y[i] - x[i]
		idle = (y[5] - x[5]) + (y[6] - x[6])
		printf "%.0f%% busy", t ? 100 * (t - idle) / t : 0 }'
	echo ", load average $(cut -d' ' -f1-3 /proc/loadavg)"
}
before=$(busy)
direct="$jail -q --net host --"
proxied="$jail -q --allow-host $addr --"
rounds "$work" \
	small-direct "$direct curl -sS -o /dev/null http://$addr/s[1-1000]" \
	small-forward "$proxied curl -sS --noproxy '' -o /dev/null http://$addr/s[1-1000]" \
	small-connect "$proxied curl -sS -p --noproxy '' -o /dev/null http://$addr/s[1-1000]" \
	big-direct "$direct curl -sS -o /dev/null http://$addr/big" \
	big-forward "$proxied curl -sS --noproxy '' -o /dev/null http://$addr/big" \
	big-connect "$proxied curl -sS -p --noproxy '' -o /dev/null http://$addr/big" \
	paced-direct "$direct curl -sS -o /dev/null http://$addr/paced" \
	paced-forward "$proxied curl -sS --noproxy '' -o /dev/null http://$addr/paced" \
	paced-connect "$proxied curl -sS -p --noproxy '' -o /dev/null http://$addr/paced"

jq -rs -L "$bench" 'include "pool"; pool |
	def row($n; $what): [$n, (.[$n] | median | ms), $what, (.[$n].cpu | ms)] | @tsv;
	def rate($n): 1000 / (.[$n] | median) | round | tostring + " requests/s";
	def speed($n): 104857600 / (.[$n] | median) / 1e6 | round | tostring + " MB/s";
	"run\tmedian ms\t\tCPU ms",
	row("small-direct"; rate("small-direct")), row("small-forward"; rate("small-forward")),
	row("small-connect"; rate("small-connect")),
	row("big-direct"; speed("big-direct")), row("big-forward"; speed("big-forward")),
	row("big-connect"; speed("big-connect")),
	row("paced-direct"; speed("paced-direct")), row("paced-forward"; speed("paced-forward")),
	row("paced-connect"; speed("paced-connect")),
	"small: forward / CONNECT rate \((.["small-connect"] | median) / (.["small-forward"] | median) | x) (target >= 0.8), forward / direct \((.["small-direct"] | median) / (.["small-forward"] | median) | x), CONNECT / direct \((.["small-direct"] | median) / (.["small-connect"] | median) | x)",
	"big: forward / direct \((.["big-direct"] | median) / (.["big-forward"] | median) | x), CONNECT / direct \((.["big-direct"] | median) / (.["big-connect"] | median) | x) (target >= 0.9)",
	"paced: forward / direct \((.["paced-direct"] | median) / (.["paced-forward"] | median) | x), CONNECT / direct \((.["paced-direct"] | median) / (.["paced-connect"] | median) | x)"
	' "$work"/round-*.json
after=$(busy)
echo "machine: $(nproc) CPUs; other work before the rounds: $before; after: $after"
if [ "${before%%%*}" -gt 20 ] || [ "${after%%%*}" -gt 20 ]; then
	echo "bench: other work kept the CPUs over 20% busy: it shared them with the runs, and the ratios are less reliable than the CPU times" >&2
fi
