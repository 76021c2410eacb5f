package proxy

import (
	"fmt"
	"slices"
	"strings"

	"github.com/jail-sandbox/jail/internal/quote"
)

// summaryHosts is how many destinations one line of the exit report names.
const summaryHosts = 10

// Summary is the exit report of the denials: one line per remedy (every destination a change
// of the allow list would open on one line, every other kind of refusal on a line with its
// own change), each naming that change; empty when nothing was denied.
func Summary(denials []Denial) string {
	type group struct {
		kind     Kind
		hint     string
		attempts int
		hosts    []string
		more     int
	}
	var groups []*group
	find := func(d Denial) *group {
		for _, g := range groups {
			if g.kind == d.Kind && (d.Kind == NotAllowed || g.hint == d.Hint) {
				return g
			}
		}
		g := &group{kind: d.Kind, hint: d.Hint}
		groups = append(groups, g)
		return g
	}
	for _, d := range denials {
		g := find(d)
		g.attempts += d.Count
		switch {
		case d.Host == MoreHosts:
			g.more += d.Count
		case d.Host != "" && !slices.Contains(g.hosts, Pattern(d.Host, d.Port)):
			g.hosts = append(g.hosts, Pattern(d.Host, d.Port))
		}
	}
	var b strings.Builder
	for _, g := range groups {
		hosts := g.hosts
		if len(hosts) > summaryHosts { // one readable line; each was logged when first refused
			g.more += len(hosts) - summaryHosts
			hosts = hosts[:summaryHosts]
		}
		if g.kind == NotAllowed && len(g.hosts) > 0 {
			g.hint = hint(NotAllowed, hosts)
			if g.more > 0 || len(hosts) < len(g.hosts) {
				g.hint += " (the others likewise)"
			}
		}
		shown := make([]string, len(hosts), len(hosts)+1)
		for i, h := range hosts {
			shown[i] = quote.Word(h)
		}
		if g.more > 0 {
			shown = append(shown, fmt.Sprintf("%d more", g.more))
		}
		to := ""
		if len(shown) > 0 {
			to = ", to " + strings.Join(shown, ", ")
		}
		fmt.Fprintf(&b, "jail: network: %d connection(s) denied%s (%s); %s\n", g.attempts, to, kindPhrase[g.kind], g.hint)
	}
	return b.String()
}

// kindPhrase says in a few words what refused a connection.
var kindPhrase = map[Kind]string{
	NotAllowed:  "not in the allow list",
	DenyEntry:   "a deny entry",
	Private:     "resolved to a non-public address",
	Reserved:    "resolved to an address that is no destination",
	Invalid:     "not a valid host",
	Connections: "too many connections at once",
	Buffer:      "too many bytes held for the sandbox's connections",
}
