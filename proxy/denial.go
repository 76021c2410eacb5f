package proxy

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// Denial is one refused destination, as logged and reported at exit. Repeated refusals of the
// same host and port are counted, not logged again.
type Denial struct {
	Host   string `json:"host"`
	Port   uint16 `json:"port"`
	Reason string `json:"reason"` // why, e.g. `it is not in the allow list`
	Hint   string `json:"hint"`   // the profile key or flag that would allow it; may be empty
	Count  int    `json:"count"`
}

// hintKind selects which grant a denial points the user to.
type hintKind int

const (
	hintNone    hintKind = iota // nothing would allow it (malformed host)
	hintAllow                   // an allow entry / --allow-host
	hintDeny                    // a deny entry is in the way
	hintPrivate                 // allow_private / --allow-private
)

func newDenial(host string, port uint16, reason string, kind hintKind, denyEntry string) *Denial {
	d := &Denial{Host: host, Port: port, Reason: reason}
	pat := Pattern(host, port)
	switch kind {
	case hintAllow:
		d.Hint = fmt.Sprintf(`to allow it, add it to the profile: [network] allow = [%q], or run jail with --allow-host %s`, pat, pat)
	case hintDeny:
		d.Hint = fmt.Sprintf(`deny wins over allow: remove %q from [network] deny to allow it`, denyEntry)
	case hintPrivate:
		d.Hint = "to allow non-public addresses, set [network] allow_private = true in the profile or run jail with --allow-private (or allow the address itself literally)"
	}
	return d
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
	return fmt.Sprintf("connection to %s refused by jail's network policy: %s", hostPort(d.Host, d.Port), d.Reason)
}

// Message is the body of the 403 answer: it says it was jail, which host, why, and what would
// allow it.
func (d *Denial) Message() string {
	var b strings.Builder
	fmt.Fprintf(&b, "jail: the sandbox's network policy blocked the connection to %s: %s.\n", hostPort(d.Host, d.Port), d.Reason)
	if d.Hint != "" {
		fmt.Fprintf(&b, "jail: %s.\n", d.Hint)
	}
	return b.String()
}

// logLine is the one stderr line for a denial.
func (d *Denial) logLine() string {
	if d.Host == MoreHosts {
		return "jail: network: " + d.Reason + "\n"
	}
	line := fmt.Sprintf("jail: network: denied %s: %s", hostPort(d.Host, d.Port), d.Reason)
	if d.Hint != "" {
		line += " (" + d.Hint + ")"
	}
	return line + "\n"
}

func hostPort(host string, port uint16) string {
	if strings.Contains(host, ":") {
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
// names must not grow jail's memory or flood the terminal. The rest are counted together in
// one last entry, Denial{Host: MoreHosts}.
const maxDenials = 1000

// MoreHosts is the Host of the entry counting refusals beyond maxDenials destinations.
const MoreHosts = "(more destinations)"

// record counts a denial and logs it the first time its host and port are refused.
func (s *Server) record(d *Denial) {
	key := hostPort(d.Host, d.Port)
	s.mu.Lock()
	i, seen := s.denialIdx[key]
	if !seen && len(s.denials) >= maxDenials {
		key = MoreHosts
		i, seen = s.denialIdx[key]
		d = &Denial{Host: MoreHosts, Reason: "too many destinations to list; no more are logged"}
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
