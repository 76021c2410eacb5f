package proxy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"time"
)

// connect resolves an allowed target on the host, drops every address the policy refuses
// (loopback, private, ... unless granted) and dials the remaining ones in order. The address
// checked is the address dialed: nothing is resolved twice, so DNS rebinding between check and
// connect cannot happen. When every address is refused the error is a *Denial (recorded).
//
// A panic in here (the hooks included) fails the connection with an error (logged), which the
// HTTP side answers with a 502 rather than just dropping the client.
func (s *Server) connect(ctx context.Context, t target) (c net.Conn, err error) {
	defer func() {
		if r := recover(); r != nil {
			if c != nil {
				_ = c.Close()
			}
			c, err = nil, s.internalError(r)
		}
	}()
	addrs := []netip.Addr{t.ip}
	if !t.ip.IsValid() {
		s.resolved.note(t.name)
		rctx, cancel := context.WithTimeout(ctx, s.opts.DialTimeout)
		addrs, err = s.opts.LookupIP(rctx, t.name)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("resolve %s: %w", t.name, err)
		}
		if len(addrs) == 0 {
			return nil, fmt.Errorf("resolve %s: no addresses", t.name)
		}
	}
	var lastErr error
	var refused *Denial
	deadline := time.Now().Add(s.opts.DialTimeout)
	for i, ip := range addrs {
		if d := s.pol.addrAllowed(t, ip); d != nil {
			if refused == nil {
				refused = d
			}
			continue
		}
		dctx, cancel := context.WithDeadline(ctx, attemptDeadline(deadline, len(addrs)-i))
		conn, err := s.opts.Dial(dctx, netip.AddrPortFrom(ip.Unmap(), t.port))
		cancel()
		if err == nil {
			return conn, nil
		}
		lastErr = err
	}
	if lastErr != nil {
		return nil, fmt.Errorf("connect %s: %w", hostPort(t.host(), t.port), lastErr)
	}
	s.record(refused)
	return nil, refused
}

// attemptDeadline shares what is left of the dial time among the addresses left to try (at
// least 2s each, as net.Dialer does), so one address that drops SYNs — an IPv6 address without
// a route, say — does not use up the whole timeout before the next is tried.
func attemptDeadline(deadline time.Time, left int) time.Time {
	remaining := time.Until(deadline)
	share := max(remaining/time.Duration(left), 2*time.Second)
	if share >= remaining {
		return deadline
	}
	return time.Now().Add(share)
}

// defaultDial connects to exactly one address.
func defaultDial(ctx context.Context, addr netip.AddrPort) (net.Conn, error) {
	var d net.Dialer
	return d.DialContext(ctx, "tcp", addr.String())
}

// defaultLookup resolves with the host's resolver.
func defaultLookup(ctx context.Context, host string) ([]netip.Addr, error) {
	return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
}

// isTimeout reports whether err is a deadline or timeout.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
}
