// Package proxy is jail's host-side egress proxy: an HTTP proxy (CONNECT and plain forward,
// with kept connections both to the sandbox and upstream) and a SOCKS5 server (CONNECT, remote
// name resolution) sharing one listener, deciding by host name against an allow/deny Policy,
// resolving names on the host and refusing private and loopback addresses so that an allowed
// name cannot become a door into the host. Every refusal names the change that would allow it.
//
// It lives apart from the launcher because it runs on the host, outside every namespace the
// sandbox gets; the sandbox reaches it only through 127.0.0.1 ports in its own network
// namespace, whose listening sockets init passes to it over a socketpair (Pair) that nothing on
// disk names (a persistent sandbox's init, through a unix socket bound into it, passes each
// connection: Forward). Being on the host, what it holds for a sandbox is host memory:
// connections and buffered bytes are capped per sandbox (limits.go), and its Report lists what
// it refused and every name it looked up on the host's resolver.
package proxy
