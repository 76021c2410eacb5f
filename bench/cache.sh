#!/usr/bin/env bash
# What the caches save: `go test ./profiles` of this repository on the host (its caches warm), in
# jail with the project's caches warm (the default profile, from its second run on), and in jail
# without them (--cache none: every run starts cold). The modules come from the host's module
# download cache, granted read-only (GOPROXY=file://...), so no network is needed.
#   bench/cache.sh [path/to/jail]       (needs: hyperfine go git)
set -euo pipefail
bench=$(realpath "$(dirname "$0")")
. "$bench/lib.sh"
jail=$(bench_jail "${1:-}")
need hyperfine go git

work=$(mktemp -d /tmp/jail-bench-cache.XXXXXX)
trap 'chmod -R u+w "$work"; rm -rf "$work"' EXIT # Go's module cache is read-only
git -C "$bench/.." archive HEAD | tar -x -C "$work"
cd "$work"
export XDG_CACHE_HOME="$work/cache"
GOMODCACHE="$work/seed" GOFLAGS=-modcacherw GOPROXY="file://$(go env GOMODCACHE)/cache/download,$(go env GOPROXY)" go mod download
seed="--rw $work/seed/cache/download --env GOPROXY=file://$work/seed/cache/download"
go test ./profiles >/dev/null
$jail $seed -- go test ./profiles >/dev/null # the first run fills the project's caches
start=$(date +%s.%N)
$jail --cache none $seed -- go test ./profiles >/dev/null
printf "jail, no caches: %.1f s (one run)\n" "$(echo "$(date +%s.%N) - $start" | bc)"
hyperfine -N --warmup 1 --runs "${RUNS:-10}" -n host "go test ./profiles" -n "jail, caches warm" "$jail $seed -- go test ./profiles"
