package jail

import (
	"io"
	"os"

	"github.com/jail-sandbox/jail/jail/internal/fail"
	"github.com/jail-sandbox/jail/plan"
	"github.com/jail-sandbox/jail/proxy"
)

// egress is the host side of network mode "proxy": the proxy server for this sandbox, on the
// host's end of a socketpair whose other end init gets with its plan and serves the proxy ports
// on 127.0.0.1 with. Nothing of it is on disk: a SIGKILLed jail leaves nothing behind.
type egress struct {
	host  *proxy.Host
	quiet bool
}

// startEgress starts the proxy when the Spec asks for one; nil otherwise. idle is called each
// time the proxy's last open connection ends.
func startEgress(spec *plan.Spec, opts Options, stderr io.Writer, idle func()) (*egress, error) {
	p := spec.Network.Proxy
	if p == nil {
		return nil, nil
	}
	if stderr == nil {
		stderr = os.Stderr
	}
	h, err := proxy.StartHost(proxy.Policy{Allow: p.Allow, Deny: p.Deny, AllowPrivate: p.AllowPrivate},
		proxy.Options{Log: stderr, Quiet: opts.Quiet, MaxConnections: p.MaxConnections, MaxBuffer: p.MaxBuffer, Idle: idle})
	if err != nil {
		return nil, fail.New("start egress proxy", "", err)
	}
	opts.log().Printf("host: egress proxy on a socketpair, init's end sent with the plan")
	return &egress{host: h, quiet: opts.Quiet}, nil
}

// sandboxEnd is what init gets with its plan: its end of the proxy's socketpair. Nil-safe.
func (e *egress) sandboxEnd() []*os.File {
	if e == nil {
		return nil
	}
	return []*os.File{e.host.Sandbox}
}

// sent closes the host's copy of init's end, which init now holds. Nil-safe.
func (e *egress) sent() {
	if e != nil {
		e.host.CloseSandbox()
	}
}

// close stops the proxy once the sandbox is gone, prints the exit report of denials and returns
// what the proxy did (for --report).
func (e *egress) close(stderr io.Writer) proxy.Report {
	if e == nil {
		return proxy.Report{}
	}
	rep := e.host.Close()
	if stderr == nil {
		stderr = os.Stderr
	}
	if s := proxy.Summary(rep.Denied); s != "" && !e.quiet {
		_, _ = io.WriteString(stderr, s)
	}
	return rep
}

// EgressPolicy is spec's egress policy, which a persistent sandbox's egress process serves
// (ServeEgress).
func EgressPolicy(spec *plan.Spec) proxy.Policy {
	p := spec.Network.Proxy
	return proxy.Policy{Allow: p.Allow, Deny: p.Deny, AllowPrivate: p.AllowPrivate}
}
