package proxy

import (
	"context"
	"fmt"
	"net"
	"os"
	"strconv"
	"sync"
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

// Host is the host side of one sandbox's proxy: a Server accepting on the ports init passes
// over the host's end of a Pair.
type Host struct {
	// Sandbox is init's end of the Pair, to be sent with its plan; the host closes its copy
	// once sent (CloseSandbox), so that only init holds it.
	Sandbox *os.File
	srv     *Server
	pair    *net.UnixConn // the host's end
	served  chan struct{}
}

// StartHost starts the proxy for a sandbox: it serves the ports init passes once it has them.
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
	pair, err := unixConn(host)
	if err != nil {
		srv.Close()
		sandbox.Close()
		return nil, err
	}
	h := &Host{Sandbox: sandbox, srv: srv, pair: pair, served: make(chan struct{})}
	go h.serve()
	return h, nil
}

// serve waits for init's ports and serves them until Close. Without them (init ended first, or
// passed something else), there is nothing to serve.
func (h *Host) serve() {
	defer close(h.served)
	ls, err := receiveListeners(h.pair)
	h.pair.Close()
	if err != nil {
		return
	}
	var wg sync.WaitGroup
	for _, l := range ls {
		wg.Go(func() { _ = h.srv.Serve(l) })
	}
	wg.Wait()
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
	_ = h.pair.Close() // ends a wait for ports that never came
	_ = h.srv.Close()
	<-h.served
	return h.srv.Report()
}

// ListenAndForward is init's part in a persistent sandbox, inside its network namespace: it
// listens on 127.0.0.1 at each port and forwards every connection to the proxy's socket at
// unixPath, bound into the sandbox. Listening happens before it returns, so the command finds
// the ports ready. The forwarders live as long as init.
func ListenAndForward(unixPath string, ports ...uint16) error {
	ls, err := listen(ports)
	if err != nil {
		return err
	}
	for _, l := range ls {
		go func() { _ = Forward(l, unixPath) }()
	}
	return nil
}

// ListenAndPass is init's part in a run, inside the sandbox's network namespace: it listens on
// 127.0.0.1 at each port and passes the listening sockets to the host's proxy over to, init's
// end of the run's Pair, which it closes. The host accepts the command's connections itself, so
// nothing of init need stay for them; they queue on the sockets until it does.
func ListenAndPass(to *os.File, ports ...uint16) error {
	defer to.Close()
	ls, err := listen(ports)
	if err != nil {
		return err
	}
	err = passListeners(to, ls)
	for _, l := range ls {
		l.Close() // the host holds them now
	}
	return err
}

// listen listens on 127.0.0.1 at each port.
func listen(ports []uint16) ([]net.Listener, error) {
	var ls []net.Listener
	var lc net.ListenConfig
	lc.SetMultipathTCP(false) // plain TCP sockets: those are what the proxy accepts when passed
	for _, p := range ports {
		l, err := lc.Listen(context.Background(), "tcp4", loopback(p))
		if err != nil {
			for _, l := range ls {
				l.Close()
			}
			return nil, fmt.Errorf("egress proxy port: %w", err)
		}
		ls = append(ls, l)
	}
	return ls, nil
}
