package proxy

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// Policy is the egress grant. Patterns are "example.com" (that name only), "*.example.com"
// (its subdomains only, never example.com itself nor badexample.com), or an IP literal
// ("10.0.0.5", "::1", "[::1]"), each with an optional ":port". In Allow a pattern without a
// port allows ports 80 and 443; in Deny it denies every port. Deny wins over Allow.
type Policy struct {
	Allow []string
	Deny  []string
	// AllowPrivate lets allowed names resolve to loopback, private, link-local and other
	// non-public addresses. Without it only an allow entry naming such an IP literally reaches it.
	AllowPrivate bool
}

// defaultPorts are what a pattern without ":port" allows.
var defaultPorts = [...]uint16{80, 443}

// pattern is one parsed Allow or Deny entry.
type pattern struct {
	text     string     // as written, for messages
	name     string     // lower-case host name, without "*." (empty for IP literals)
	wildcard bool       // "*.name": strict subdomains of name
	ip       netip.Addr // valid for IP-literal patterns (unmapped)
	port     uint16     // 0: no port given
}

// policy is a compiled Policy.
type policy struct {
	allow, deny  []pattern
	allowPrivate bool
}

func compilePolicy(p Policy) (*policy, error) {
	c := &policy{allowPrivate: p.AllowPrivate}
	for _, s := range p.Allow {
		pt, err := parsePattern(s)
		if err != nil {
			return nil, fmt.Errorf("allow %q: %w", s, err)
		}
		c.allow = append(c.allow, pt)
	}
	for _, s := range p.Deny {
		pt, err := parsePattern(s)
		if err != nil {
			return nil, fmt.Errorf("deny %q: %w", s, err)
		}
		c.deny = append(c.deny, pt)
	}
	return c, nil
}

// ValidatePattern reports whether s is a well-formed allow/deny pattern, so that profiles can
// reject a bad entry with its file and line before anything starts.
func ValidatePattern(s string) error {
	_, err := parsePattern(s)
	return err
}

func parsePattern(s string) (pattern, error) {
	pt := pattern{text: s}
	hostPart, portPart, err := splitPattern(strings.TrimSpace(s))
	if err != nil {
		return pt, err
	}
	if portPart != "" {
		if pt.port, err = parsePort(portPart); err != nil {
			return pt, err
		}
	}
	if strings.HasPrefix(hostPart, "*.") {
		pt.wildcard = true
		hostPart = hostPart[2:]
	}
	name, ip, err := normalizeHost(hostPart)
	if err != nil {
		return pt, err
	}
	if ip.IsValid() && pt.wildcard {
		return pt, errors.New("a wildcard cannot prefix an IP address")
	}
	pt.name, pt.ip = name, ip
	return pt, nil
}

// splitPattern separates "host[:port]", "[v6][:port]" and a bare IPv6 literal.
func splitPattern(s string) (host, port string, err error) {
	if s == "" {
		return "", "", errors.New("empty pattern")
	}
	if strings.HasPrefix(s, "[") {
		end := strings.IndexByte(s, ']')
		if end < 0 {
			return "", "", errors.New("missing ]")
		}
		host, rest := s[1:end], s[end+1:]
		if _, err := netip.ParseAddr(host); err != nil {
			return "", "", errors.New("brackets must hold an IPv6 address")
		}
		if rest == "" {
			return host, "", nil
		}
		if !strings.HasPrefix(rest, ":") {
			return "", "", errors.New("unexpected text after ]")
		}
		return host, rest[1:], nil
	}
	switch strings.Count(s, ":") {
	case 0:
		return s, "", nil
	case 1:
		i := strings.IndexByte(s, ':')
		return s[:i], s[i+1:], nil
	default: // a bare IPv6 literal cannot carry a port
		return s, "", nil
	}
}

func parsePort(s string) (uint16, error) {
	n, err := strconv.ParseUint(s, 10, 16)
	if err != nil || n == 0 {
		return 0, fmt.Errorf("bad port %q (want 1-65535)", s)
	}
	return uint16(n), nil
}

// normalizeHost returns a lower-case host name without trailing dot, or an unmapped IP.
// Names must be plain DNS names; one whose last label is numeric ("127.1", "0x7f.1") is refused
// since resolvers may read it as an address.
func normalizeHost(h string) (string, netip.Addr, error) {
	if ip, err := netip.ParseAddr(h); err == nil {
		if ip.Zone() != "" {
			return "", netip.Addr{}, errors.New("scoped IPv6 addresses are not allowed")
		}
		return "", ip.Unmap(), nil
	}
	name := strings.TrimSuffix(strings.ToLower(h), ".")
	if name == "" || len(name) > 253 {
		return "", netip.Addr{}, fmt.Errorf("bad host name %q", h)
	}
	labels := strings.Split(name, ".")
	for _, l := range labels {
		if l == "" || len(l) > 63 || strings.Trim(l, "abcdefghijklmnopqrstuvwxyz0123456789-_") != "" {
			return "", netip.Addr{}, fmt.Errorf("bad host name %q", h)
		}
	}
	last := labels[len(labels)-1]
	if strings.Trim(last, "0123456789") == "" || strings.HasPrefix(last, "0x") {
		return "", netip.Addr{}, fmt.Errorf("bad host name %q (numeric last label)", h)
	}
	return name, netip.Addr{}, nil
}

// matches reports whether the pattern covers name (or ip) and port. anyPort makes a
// pattern without port match every port (deny); otherwise it matches only the default ports.
func (pt *pattern) matches(name string, ip netip.Addr, port uint16, anyPort bool) bool {
	if !pt.portMatches(port, anyPort) {
		return false
	}
	if ip.IsValid() || pt.ip.IsValid() {
		return ip.IsValid() && pt.ip == ip
	}
	if pt.wildcard {
		return strings.HasSuffix(name, "."+pt.name)
	}
	return name == pt.name
}

func (pt *pattern) portMatches(port uint16, anyPort bool) bool {
	if pt.port != 0 {
		return pt.port == port
	}
	if anyPort {
		return true
	}
	for _, p := range defaultPorts {
		if p == port {
			return true
		}
	}
	return false
}

// target is a request the policy allowed by name: what the dialer may connect to.
type target struct {
	name string     // host name to resolve, or empty for an IP literal
	ip   netip.Addr // the literal address, allowed literally
	port uint16
}

// decide checks a requested host and port against the policy, by name only (the resolved
// addresses are checked by addrAllowed). host may be a name, an IP or a bracketed IPv6.
func (p *policy) decide(host string, port uint16) (target, *Denial) {
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	name, ip, err := normalizeHost(host)
	if err != nil {
		return target{}, newDenial(host, port, Invalid, err.Error())
	}
	t := target{name: name, ip: ip, port: port}
	for i := range p.deny {
		if p.deny[i].matches(name, ip, port, true) {
			return t, denyDenial(t.host(), port, fmt.Sprintf("it matches the deny entry %q", p.deny[i].text), p.deny[i].text)
		}
	}
	for i := range p.allow {
		if p.allow[i].matches(name, ip, port, false) {
			return t, nil
		}
	}
	if ip.IsValid() {
		return t, newDenial(t.host(), port, NotAllowed, "IP addresses are refused unless allowed literally")
	}
	return t, newDenial(t.host(), port, NotAllowed, "it is not in the allow list")
}

// addrAllowed checks one address t resolved to (or its literal) before connecting, and says
// why not. An IPv4-mapped IPv6 address is judged as the IPv4 address it is (and dialed as
// such), so ::ffff:127.0.0.1 is loopback. (Go's resolver returns A records in that form, too.)
func (p *policy) addrAllowed(t target, resolved netip.Addr) *Denial {
	ip := resolved.Unmap()
	for i := range p.deny {
		if p.deny[i].ip.IsValid() && p.deny[i].matches("", ip, t.port, true) {
			return denyDenial(t.host(), t.port, fmt.Sprintf("%s matches the deny entry %q", ip, p.deny[i].text), p.deny[i].text)
		}
	}
	for i := range p.allow {
		if p.allow[i].ip.IsValid() && p.allow[i].matches("", ip, t.port, false) {
			return nil
		}
	}
	class, never := classify(ip)
	switch {
	case class == "" || (p.allowPrivate && !never):
		return nil
	case never:
		return reservedDenial(t.host(), t.port, ip, fmt.Sprintf("%s is no destination (%s)", ip, class))
	}
	return newDenial(t.host(), t.port, Private, fmt.Sprintf("%s is not a public address (%s)", ip, class))
}

func (t target) host() string {
	if t.ip.IsValid() {
		return t.ip.String()
	}
	return t.name
}
