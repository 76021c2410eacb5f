package proxy

import (
	"net/netip"
	"strings"
	"testing"
)

func mustPolicy(t *testing.T, p Policy) *policy {
	t.Helper()
	c, err := compilePolicy(p)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestDecide(t *testing.T) {
	pol := mustPolicy(t, Policy{
		Allow: []string{"example.com", "*.pythonhosted.org", "github.com:443", "*.corp.test", "10.1.2.3", "[2001:db8::7]:8443", "::1"},
		Deny:  []string{"secret.corp.test", "*.evil.corp.test"},
	})
	cases := []struct {
		host  string
		port  uint16
		allow bool
	}{
		{"example.com", 443, true},
		{"example.com", 80, true},
		{"EXAMPLE.com.", 443, true}, // case and trailing dot do not matter
		{"example.com", 8080, false},
		{"www.example.com", 443, false}, // a plain name does not cover subdomains
		{"files.pythonhosted.org", 443, true},
		{"a.b.pythonhosted.org", 443, true},
		{"pythonhosted.org", 443, false},    // *.x is subdomains only
		{"badpythonhosted.org", 443, false}, // ... and not a suffix match
		{"github.com", 443, true},
		{"github.com", 80, false}, // an explicit port replaces the defaults
		{"x.corp.test", 443, true},
		{"secret.corp.test", 443, false}, // deny beats allow
		{"secret.corp.test", 9999, false},
		{"a.evil.corp.test", 80, false},
		{"10.1.2.3", 443, true}, // literal allowed literally
		{"10.1.2.4", 443, false},
		{"::ffff:10.1.2.3", 443, true}, // the same address, mapped
		{"2001:db8::7", 8443, true},
		{"[2001:db8::7]", 8443, true},
		{"2001:db8:0:0::7", 8443, true}, // another spelling
		{"2001:db8::7", 443, false},
		{"::1", 80, true},
		{"93.184.215.14", 443, false}, // IP literals need a literal entry
		{"127.1", 80, false},          // numeric-looking names are not names
		{"0x7f.1", 80, false},
		{"exa mple.com", 80, false},
		{"fe80::1%eth0", 80, false},
	}
	for _, c := range cases {
		_, d := pol.decide(c.host, c.port)
		if got := d == nil; got != c.allow {
			t.Errorf("decide(%q, %d) allowed=%v, want %v (%v)", c.host, c.port, got, c.allow, d)
		}
	}
}

func TestWildcardNeverMatchesApexOrLookalike(t *testing.T) {
	pol := mustPolicy(t, Policy{Allow: []string{"*.example.com"}})
	for _, h := range []string{"example.com", "badexample.com", "example.com.evil.org", "xexample.com"} {
		if _, d := pol.decide(h, 443); d == nil {
			t.Errorf("*.example.com matched %q", h)
		}
	}
	if _, d := pol.decide("a.example.com", 443); d != nil {
		t.Errorf("*.example.com refused a.example.com: %v", d)
	}
}

func TestDenialHints(t *testing.T) {
	pol := mustPolicy(t, Policy{Allow: []string{"*.corp.test"}, Deny: []string{"secret.corp.test"}})
	_, d := pol.decide("pypi.org", 443)
	msg := d.Message()
	for _, want := range []string{"jail", "pypi.org:443", `[network] allow = ["pypi.org"]`, "--allow-host pypi.org"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
	_, d = pol.decide("pypi.org", 8443)
	if !strings.Contains(d.Message(), "--allow-host pypi.org:8443") {
		t.Errorf("non-default port hint: %q", d.Message())
	}
	_, d = pol.decide("::1", 8080)
	if !strings.Contains(d.Message(), "--allow-host [::1]:8080") {
		t.Errorf("IPv6 hint: %q", d.Message())
	}
	_, d = pol.decide("secret.corp.test", 443)
	if !strings.Contains(d.Message(), `"secret.corp.test"`) || !strings.Contains(d.Message(), "deny") {
		t.Errorf("deny hint: %q", d.Message())
	}
}

func TestBadPatterns(t *testing.T) {
	for _, p := range []string{"", "example.com:0", "example.com:70000", "example.com:http", "*.10.0.0.1", "[example.com]:80", "[::1", "[::1]x", "a..b", "-bad host", "127.1"} {
		if err := ValidatePattern(p); err == nil {
			t.Errorf("pattern %q accepted", p)
		}
	}
	for _, p := range []string{"example.com", "*.example.com:8443", "10.0.0.1:22", "::1", "[::1]", "[fd00::1]:443", "crates.io"} {
		if err := ValidatePattern(p); err != nil {
			t.Errorf("pattern %q refused: %v", p, err)
		}
	}
}

func TestAddrGuard(t *testing.T) {
	strict := mustPolicy(t, Policy{Allow: []string{"x.test", "10.9.9.9"}, Deny: []string{"203.0.113.5"}})
	loose := mustPolicy(t, Policy{Allow: []string{"x.test"}, AllowPrivate: true})
	cases := []struct {
		ip            string
		strict, loose bool
	}{
		{"93.184.215.14", true, true},
		{"2606:4700::1111", true, true},
		{"127.0.0.1", false, true},
		{"127.8.9.10", false, true},
		{"10.0.0.1", false, true},
		{"10.9.9.9", true, true}, // allowed literally
		{"172.16.5.4", false, true},
		{"192.168.1.1", false, true},
		{"169.254.169.254", false, true},
		{"100.64.0.1", false, true},
		{"0.0.0.0", false, false}, // reaches the host itself: never by AllowPrivate
		{"224.0.0.1", false, false},
		{"255.255.255.255", false, false},
		{"::1", false, true},
		{"::", false, false},
		{"fe80::1", false, true},
		{"fd12:3456::1", false, true},
		{"fc00::1", false, true},
		{"::ffff:127.0.0.1", false, true},    // mapped forms are judged as the IPv4 address
		{"::ffff:93.184.215.14", true, true}, // they carry, and dialed as such
		{"::127.0.0.1", false, true},
		{"64:ff9b::7f00:1", false, true}, // NAT64 of 127.0.0.1
		{"64:ff9b::5db8:d70e", true, true},
		{"2002:7f00:1::", false, true}, // 6to4 of 127.0.0.1
		{"ff02::1", false, false},
	}
	x := target{name: "x.test", port: 443}
	for _, c := range cases {
		ip := netip.MustParseAddr(c.ip)
		if d := strict.addrAllowed(x, ip); (d == nil) != c.strict {
			t.Errorf("strict %s: %v, want allowed %v", c.ip, d, c.strict)
		}
		if d := loose.addrAllowed(x, ip); (d == nil) != c.loose {
			t.Errorf("allow_private %s: %v, want allowed %v", c.ip, d, c.loose)
		}
	}
	if d := strict.addrAllowed(x, netip.MustParseAddr("203.0.113.5")); d == nil || d.Kind != DenyEntry || !strings.Contains(d.Hint, `remove "203.0.113.5" from [network] deny`) {
		t.Errorf("a deny literal did not refuse a resolved address: %+v", d)
	}
}
