package proxy

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"github.com/jail-sandbox/jail/internal/quote"
)

// Denial is one refused destination, as logged and reported at exit. Repeated refusals of the
// same host and port are counted, not logged again. Host is what the sandbox asked for: print
// it through quote.Word (Message, logLine and Summary do).
type Denial struct {
	Host   string `json:"host"`
	Port   uint16 `json:"port"`
	Kind   Kind   `json:"kind"`
	Reason string `json:"reason"` // why, e.g. `it is not in the allow list`
	// Hint is the one change that would allow it (the profile key and the flag, when there is
	// one), or why no setting would.
	Hint  string `json:"hint"`
	Count int    `json:"count"`
}

// Kind is what refused a connection; each kind has its own remedy.
type Kind string

const (
	// NotAllowed: no allow entry matches the name or address (--allow-host, [network] allow).
	NotAllowed Kind = "not-allowed"
	// DenyEntry: a deny entry matches; deny wins over allow (remove it from [network] deny).
	DenyEntry Kind = "deny-entry"
	// Private: an allowed name resolved to a loopback, private or other non-public address
	// (--allow-private, [network] allow_private).
	Private Kind = "private"
	// Reserved: an allowed name resolved to an address that is no destination at all
	// (unspecified, multicast): only an allow entry naming that address opens it.
	Reserved Kind = "reserved"
	// Invalid: the host is no valid name or address; no setting allows it.
	Invalid Kind = "invalid"
	// Connections: more connections at once than [network] max_connections.
	Connections Kind = "connections"
	// Buffer: the proxy already holds [network] max_buffer bytes for the sandbox's connections.
	Buffer Kind = "buffer"
)

func newDenial(host string, port uint16, kind Kind, reason string) *Denial {
	return &Denial{Host: host, Port: port, Kind: kind, Reason: reason, Hint: hint(kind, []string{Pattern(host, port)})}
}

// reservedDenial is a refusal of the address ip that host resolved to.
func reservedDenial(host string, port uint16, ip netip.Addr, reason string) *Denial {
	d := newDenial(host, port, Reserved, reason)
	d.Hint = hint(Reserved, []string{Pattern(ip.String(), port)})
	return d
}

// denyDenial is a refusal by the deny entry entry.
func denyDenial(host string, port uint16, reason, entry string) *Denial {
	d := newDenial(host, port, DenyEntry, reason)
	d.Hint = fmt.Sprintf(`deny wins over allow: remove %q from [network] deny to allow it`, entry)
	return d
}

// limitDenial is a connection refused by one of the proxy's own limits, before its destination
// was read.
func limitDenial(kind Kind, limit int64) *Denial {
	d := &Denial{Kind: kind}
	switch kind {
	case Connections:
		d.Reason = fmt.Sprintf("%d connections through the proxy are open already", limit)
		d.Hint = fmt.Sprintf("to allow more at once, raise [network] max_connections (now %d) in the profile", limit)
	case Buffer:
		d.Reason = fmt.Sprintf("the proxy holds %d bytes for the sandbox's connections already", limit)
		d.Hint = fmt.Sprintf("to allow more, raise [network] max_buffer (now %d bytes) in the profile", limit)
	}
	return d
}

// hint is the change that would allow a refusal of the kind, for the allow patterns pats that
// would cover what was refused.
func hint(kind Kind, pats []string) string {
	it := "it"
	if len(pats) > 1 {
		it = "them"
	}
	switch kind {
	case NotAllowed:
		return "to allow " + it + ", " + allowEntries(it, pats)
	case Reserved:
		return "allow_private does not open such an address; to allow " + it + ", " + allowEntries(it, pats)
	case Private:
		return "to allow " + it + ", set [network] allow_private = true in the profile, or run jail with --allow-private"
	case Invalid:
		return "no setting allows a malformed host"
	}
	return ""
}

// allowEntries is the addition of pats (it or them) to the allow list, as profile key and as
// flags.
func allowEntries(it string, pats []string) string {
	quoted := make([]string, len(pats))
	flags := make([]string, len(pats))
	for i, p := range pats {
		quoted[i] = strconv.Quote(p)
		flags[i] = "--allow-host " + p
	}
	return fmt.Sprintf("add %s to the profile: [network] allow = [%s], or run jail with %s",
		it, strings.Join(quoted, ", "), strings.Join(flags, " "))
}

// Pattern is the allow entry that would cover exactly host and port: the bare host for the
// default ports, host:port otherwise (IPv6 bracketed when a port follows).
func Pattern(host string, port uint16) string {
	for _, p := range defaultPorts {
		if p == port {
			return host
		}
	}
	if ip, err := netip.ParseAddr(host); err == nil && ip.Is6() {
		return "[" + host + "]:" + strconv.Itoa(int(port))
	}
	return host + ":" + strconv.Itoa(int(port))
}

// Error makes a Denial usable as the error of a refused dial.
func (d *Denial) Error() string {
	return fmt.Sprintf("connection to %s refused by jail's network policy: %s", d.where(), d.Reason)
}

// Message is the body of the 403 answer (503 for the proxy's own limits): it says it was
// jail, which host, why, and what would allow it.
func (d *Denial) Message() string {
	var b strings.Builder
	if d.Host == "" {
		fmt.Fprintf(&b, "jail: the proxy refused the connection: %s.\n", d.Reason)
	} else {
		fmt.Fprintf(&b, "jail: the sandbox's network policy blocked the connection to %s: %s.\n", d.where(), d.Reason)
	}
	if d.Hint != "" {
		fmt.Fprintf(&b, "jail: %s.\n", d.Hint)
	}
	return b.String()
}

// logLine is the one stderr line for a denial.
func (d *Denial) logLine() string {
	line := "jail: network: denied " + d.where() + ": " + d.Reason
	if d.Host == "" {
		line = "jail: network: refused a connection: " + d.Reason
	}
	if d.Hint != "" {
		line += " (" + d.Hint + ")"
	}
	return line + "\n"
}

// where names the destination for people: host:port, quoted where the sandbox put anything but
// plain characters in the name.
func (d *Denial) where() string {
	if d.Host == MoreHosts {
		return "more destinations"
	}
	return quote.Word(hostPort(d.Host, d.Port))
}

func hostPort(host string, port uint16) string {
	if ip, err := netip.ParseAddr(host); err == nil && ip.Is6() {
		return "[" + host + "]:" + strconv.Itoa(int(port))
	}
	return host + ":" + strconv.Itoa(int(port))
}

// decide applies the policy to a requested host and port, recording a refusal.
func (s *Server) decide(host string, port uint16) (target, *Denial) {
	t, d := s.pol.decide(host, port)
	if d != nil {
		s.record(d)
	}
	return t, d
}

// maxDenials bounds the distinct destinations kept (and logged): a command trying endless
// names must not grow jail's memory or flood the terminal. The rest are counted together, one
// entry per kind, Denial{Host: MoreHosts}.
const maxDenials = 1000

// MoreHosts is the Host of the entries counting refusals beyond maxDenials destinations.
const MoreHosts = "(more destinations)"

// record counts a denial and logs it the first time its host and port (or, for the proxy's own
// limits, its kind) are refused.
func (s *Server) record(d *Denial) {
	key := string(d.Kind) + " " + hostPort(d.Host, d.Port)
	s.mu.Lock()
	i, seen := s.denialIdx[key]
	if !seen && len(s.denials) >= maxDenials {
		key = string(d.Kind) + " " + MoreHosts
		i, seen = s.denialIdx[key]
		d = &Denial{Host: MoreHosts, Kind: d.Kind, Reason: "too many destinations to list; no more are logged", Hint: d.Hint}
		if d.Kind == NotAllowed {
			d.Hint = hint(NotAllowed, []string{"HOST"})
		}
	}
	if seen {
		s.denials[i].Count++
	} else {
		s.denialIdx[key] = len(s.denials)
		c := *d
		c.Count = 1
		s.denials = append(s.denials, c)
	}
	s.mu.Unlock()
	if !seen && !s.opts.Quiet {
		s.logMu.Lock()
		_, _ = s.opts.Log.Write([]byte(d.logLine()))
		s.logMu.Unlock()
	}
}

// Denials returns every refused destination so far, in order of first refusal, with counts.
func (s *Server) Denials() []Denial {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Denial(nil), s.denials...)
}
