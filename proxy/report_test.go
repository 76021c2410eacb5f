package proxy

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"sync"
	"testing"
)

// TestResolvedNamesUnderWildcard: under a wildcard allow entry the sandbox picks the names the
// host looks up, and every lookup reaches the domain's name servers — data the names spell goes
// out. Each name reaches the host's resolver (the hook stands for it) and the report lists it;
// names the allow list refuses are never looked up.
func TestResolvedNamesUnderWildcard(t *testing.T) {
	var mu sync.Mutex
	var asked []string
	tp := startProxy(t, Policy{Allow: []string{"*.example.test"}}, nil, func(o *Options) {
		o.LookupIP = func(_ context.Context, host string) ([]netip.Addr, error) {
			mu.Lock()
			asked = append(asked, host)
			mu.Unlock()
			return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil // refused: loopback
		}
	})
	secret := []string{"c2vjcmv0.1.example.test", "bw9yzq.2.example.test", "c2vjcmv0.1.example.test"}
	for _, name := range append(secret, "elsewhere.test") {
		_, _ = tp.get(t, "http://"+name+"/")
	}
	want := []string{"c2vjcmv0.1.example.test", "bw9yzq.2.example.test"}
	rep := tp.srv.Report()
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(asked, secret) || !slices.Equal(rep.Resolved, want) || rep.ResolvedMore != 0 {
		t.Errorf("looked up %q, reported %q (+%d)", asked, rep.Resolved, rep.ResolvedMore)
	}
}

// TestResolvedBounded: endless names cost the report a bounded list and a count.
func TestResolvedBounded(t *testing.T) {
	var r resolved
	for i := range maxResolved + 5 {
		r.note(fmt.Sprintf("n%d.test", i))
	}
	r.note("n0.test")
	if len(r.names) != maxResolved || r.more != 5 {
		t.Errorf("%d names, %d more", len(r.names), r.more)
	}
}
