package proxy

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
)

// Where the sandbox finds the proxy. The launcher binds the host socket at SocketPath and init
// serves the two ports on the sandbox's own loopback; Env points the command's tools at them.
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

// HostSocket names where the host side of one sandbox's proxy will listen: a socket in a new
// directory under dir (the host's temporary directory, with its symlinks resolved: the launcher
// binds the socket without following any), named after the run's id, which must be random so
// that no other user can guess the name and make it first. Nothing is created until StartHost.
func HostSocket(dir, id string) string {
	return filepath.Join(dir, "jail-egress-"+id, "egress.sock")
}

// Host is the host side of one sandbox's proxy: a Server on a unix socket in a private
// directory (mode 0700, so no other host user can use it), to be bound into the sandbox.
type Host struct {
	// Socket is the host path of the unix socket.
	Socket string
	srv    *Server
	dir    string
	served chan error
}

// StartHost starts the proxy for a sandbox on socket (HostSocket), creating its directory,
// which must not exist yet.
func StartHost(socket string, p Policy, opts Options) (*Host, error) {
	srv, err := NewServer(p, opts)
	if err != nil {
		return nil, err
	}
	dir := filepath.Dir(socket)
	if err := os.Mkdir(dir, 0o700); err != nil {
		srv.Close()
		return nil, fmt.Errorf("egress proxy: %w", err)
	}
	h := &Host{Socket: socket, srv: srv, dir: dir, served: make(chan error, 1)}
	l, err := net.Listen("unix", h.Socket)
	if err != nil {
		srv.Close()
		os.RemoveAll(dir)
		return nil, fmt.Errorf("egress proxy: %w", err)
	}
	go func() { h.served <- srv.Serve(l) }()
	return h, nil
}

// Close ends every connection, removes the socket and returns what the proxy did.
func (h *Host) Close() Report {
	_ = h.srv.Close()
	<-h.served
	_ = os.RemoveAll(h.dir)
	return h.srv.Report()
}

// ListenAndForward is init's part, inside the sandbox's network namespace: it listens on
// 127.0.0.1 at each port and forwards every connection to the proxy's socket at unixPath.
// Listening happens before it returns, so the command finds the ports ready. The forwarders
// live as long as init.
func ListenAndForward(unixPath string, ports ...uint16) error {
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
		go func() { _ = Forward(l, unixPath) }()
	}
	return nil
}
