# Pools the rounds `rounds` (lib.sh) leaves, read with jq -s: an object keyed by command name,
# each with its wall times sorted and its mean user+system CPU time (the steadiest figure on a
# busy machine). Use as: jq -rs -L bench 'include "pool"; pool | ...'.
def pool: [.[].results[]] | group_by(.command) | map({key: .[0].command, value: {
	times: ([.[].times[]] | sort),
	cpu: ([.[] | (.user + .system)] | add / length)}}) | from_entries;
def median: .times[.times | length / 2 | floor];
def ms: . * 1000 | . * 10 | round / 10;
def x: . * 1000 | round / 1000 | tostring + "x";
