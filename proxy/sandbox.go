package proxy

import (
	"context"
	"fmt"
	"net"
	"os"
	"strconv"
)

// The ports init serves on the sandbox's own loopback; Env points the command's tools at them.
// SocketPath is where a persistent sandbox's plan binds its proxy's socket.
const (
	SocketPath = "/run/jail/egress.sock"
	HTTPPort   = 3128
	SOCKSPort  = 1080
)

// SandboxEnv is Env for the standard ports.
func SandboxEnv() []string {
	return Env(loopback(HTTPPort), loopback(SOCKSPort))
}

func loopback(port uint16) string { return "127.0.0.1:" + strconv.Itoa(int(port)) }

// Host is the host side of one sandbox's proxy: a Server on the host's end of a Pair.
type Host struct {
	// Sandbox is init's end of the Pair, to be sent with its plan; the host closes its copy
	// once sent (CloseSandbox), so that only init holds it.
	Sandbox *os.File
	srv     *Server
	served  chan error
}

// StartHost starts the proxy for a sandbox.
func StartHost(p Policy, opts Options) (*Host, error) {
	srv, err := NewServer(p, opts)
	if err != nil {
		return nil, err
	}
	host, sandbox, err := Pair()
	if err != nil {
		srv.Close()
		return nil, err
	}
	l, err := Passed(host)
	if err != nil {
		srv.Close()
		sandbox.Close()
		return nil, err
	}
	h := &Host{Sandbox: sandbox, srv: srv, served: make(chan error, 1)}
	go func() { h.served <- srv.Serve(l) }()
	return h, nil
}

// CloseSandbox closes the host's copy of init's end, once init has it.
func (h *Host) CloseSandbox() {
	if h.Sandbox != nil {
		h.Sandbox.Close()
		h.Sandbox = nil
	}
}

// Close ends every connection and returns what the proxy did.
func (h *Host) Close() Report {
	h.CloseSandbox()
	_ = h.srv.Close()
	<-h.served
	return h.srv.Report()
}

// ListenAndForward is init's part, inside the sandbox's network namespace: it listens on
// 127.0.0.1 at each port and forwards every connection to the proxy's socket at unixPath (a
// persistent sandbox's, bound into it). Listening happens before it returns, so the command
// finds the ports ready. The forwarders live as long as init.
func ListenAndForward(unixPath string, ports ...uint16) error {
	return listenAndForward(ports, func(l net.Listener) error { return Forward(l, unixPath) })
}

// ListenAndForwardOver is ListenAndForward for a run: every connection goes to the proxy over
// to, init's end of the run's Pair, which it takes.
func ListenAndForwardOver(to *os.File, ports ...uint16) error {
	uc, err := unixConn(to)
	if err != nil {
		return err
	}
	err = listenAndForward(ports, func(l net.Listener) error { return ForwardOver(l, uc) })
	if err != nil {
		uc.Close()
	}
	return err
}

func listenAndForward(ports []uint16, forward func(net.Listener) error) error {
	var ls []net.Listener
	var lc net.ListenConfig
	lc.SetMultipathTCP(false) // plain TCP sockets: those are what the proxy accepts when passed
	for _, p := range ports {
		l, err := lc.Listen(context.Background(), "tcp4", loopback(p))
		if err != nil {
			for _, l := range ls {
				l.Close()
			}
			return fmt.Errorf("egress proxy port: %w", err)
		}
		ls = append(ls, l)
	}
	for _, l := range ls {
		go func() { _ = forward(l) }()
	}
	return nil
}
