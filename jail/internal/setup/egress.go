package setup

import (
	"github.com/jail-sandbox/jail/proxy"
)

// serveEgressPorts is init's step for mode "proxy": 127.0.0.1 ports that forward to the bound
// socket, listening before the command starts.
func (s *setup) serveEgressPorts() error {
	p := s.spec.Network.Proxy
	if p == nil {
		return nil
	}
	return proxy.ListenAndForward(p.Socket, p.HTTPPort, p.SOCKSPort)
}
