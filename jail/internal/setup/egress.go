package setup

import (
	"fmt"

	"github.com/jail-sandbox/jail/proxy"
)

// serveEgressPorts is init's step for mode "proxy": 127.0.0.1 ports listening before the command
// starts, whose sockets go to the host's proxy over the socket that came with the plan (a
// persistent sandbox's pass each connection to the socket bound at plan.Proxy.Socket).
func (s *setup) serveEgressPorts() error {
	p := s.spec.Network.Proxy
	if p == nil {
		return nil
	}
	if p.Socket != "" { // a persistent sandbox's proxy, bound into it (plan.Proxy)
		return proxy.ListenAndForward(p.Socket, p.HTTPPort, p.SOCKSPort)
	}
	if len(s.files) != 1 {
		return fmt.Errorf("the plan came with %d descriptors, not the egress proxy's socket", len(s.files))
	}
	to := s.files[0]
	s.files = nil
	return proxy.ListenAndPass(to, p.HTTPPort, p.SOCKSPort)
}
