// Package proxy is jail's host-side egress proxy: an HTTP proxy (CONNECT and plain forward,
// with kept connections both to the sandbox and upstream) and a SOCKS5 server (CONNECT, remote
// name resolution) sharing one listener, deciding by host name against an allow/deny Policy,
// resolving names on the host and refusing private and loopback addresses so that an allowed
// name cannot become a door into the host. Every refusal names the change that would allow it.
//
// It lives apart from the launcher because it runs on the host, outside every namespace the
// sandbox gets; the sandbox reaches it only through init's end of a socketpair (Pair), which
// nothing on disk names (a persistent sandbox's, through a unix socket bound into it). Inside
// the sandbox, Forward passes the connections made to 127.0.0.1 ports over it. Being on the
// host, what it holds for a sandbox is host memory: connections and buffered bytes are capped
// per sandbox (limits.go), and its Report lists what it refused and every name it looked up on
// the host's resolver.
package proxy
