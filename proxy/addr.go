package proxy

import (
	"net/netip"
	"sync"
)

// special is one address range the proxy does not connect to by default. never marks ranges
// that are no destination at all (connecting to 0.0.0.0 or :: reaches the host itself), so
// AllowPrivate does not open them; only an allow entry naming the address literally does.
type special struct {
	prefix netip.Prefix
	class  string
	never  bool
}

// specials is made on first use: as a package variable it was made in both of a run's Go
// starts (25 prefixes parsed, 5 KB), runs without the egress proxy included.
var specials = sync.OnceValue(func() []special {
	var s []special
	add := func(cidr, class string, never bool) {
		s = append(s, special{netip.MustParsePrefix(cidr), class, never})
	}
	add("0.0.0.0/8", "this-network (unspecified)", true)
	add("10.0.0.0/8", "private", false)
	add("100.64.0.0/10", "shared (carrier-grade NAT)", false)
	add("127.0.0.0/8", "loopback", false)
	add("169.254.0.0/16", "link-local", false)
	add("172.16.0.0/12", "private", false)
	add("192.0.0.0/24", "IETF protocol assignment", false)
	add("192.0.2.0/24", "documentation", false)
	add("192.168.0.0/16", "private", false)
	add("198.18.0.0/15", "benchmarking", false)
	add("198.51.100.0/24", "documentation", false)
	add("203.0.113.0/24", "documentation", false)
	add("224.0.0.0/4", "multicast", true)
	add("240.0.0.0/4", "reserved or broadcast", true)
	add("::/128", "unspecified", true)
	add("::1/128", "loopback", false)
	add("::/96", "IPv4-compatible IPv6", false)
	add("64:ff9b:1::/48", "local-use NAT64", false)
	add("100::/64", "discard-only", false)
	add("2001::/32", "Teredo", false)
	add("2001:db8::/32", "documentation", false)
	add("fc00::/7", "unique-local", false)
	add("fe80::/10", "link-local", false)
	add("fec0::/10", "site-local", false)
	add("ff00::/8", "multicast", true)
	return s
})

// embedsIPv4 are IPv6 ranges that carry an IPv4 destination (NAT64, 6to4); the embedded
// address is classified too, so 64:ff9b::7f00:1 counts as loopback.
var (
	nat64     = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour = netip.MustParsePrefix("2002::/16")
)

// classify names the special range ip lies in, or "" for an ordinary public address. IPv4-mapped
// addresses must be unmapped first (addrAllowed does): they are the IPv4 address they carry.
func classify(ip netip.Addr) (class string, never bool) {
	if !ip.IsValid() || ip.Zone() != "" {
		return "scoped or invalid", true
	}
	for _, s := range specials() {
		if s.prefix.Contains(ip) {
			return s.class, s.never
		}
	}
	b := ip.As16()
	var inner netip.Addr
	switch {
	case nat64.Contains(ip):
		inner = netip.AddrFrom4([4]byte(b[12:16]))
	case sixToFour.Contains(ip):
		inner = netip.AddrFrom4([4]byte(b[2:6]))
	default:
		return "", false
	}
	if c, n := classify(inner); c != "" {
		return c + " (embedded in " + ip.String() + ")", n
	}
	return "", false
}
