package proxy

import (
	"net"
	"strings"
)

// NoProxy is the sandbox's own loopback, reached directly so that servers a command starts
// inside the sandbox stay reachable.
const NoProxy = "localhost,127.0.0.1,::1"

// Env returns the variables that point a command's tools at the proxy: httpAddr and
// socksAddr are the 127.0.0.1:PORT listeners inside the sandbox (they may be the same port,
// the proxy tells HTTP and SOCKS5 apart). The caller sets them over the command's environment.
//
//   - HTTP_PROXY, HTTPS_PROXY, ALL_PROXY, NO_PROXY and their lower-case twins: curl and git
//     (libcurl reads http_proxy only in lower case), wget, pip/requests, urllib, Go's
//     net/http (go get, GOPROXY fetches), Ruby, Rust's reqwest, Deno, Bun. ALL_PROXY is
//     socks5h:// so that names are resolved by the proxy, never inside the sandbox.
//   - npm_config_proxy, npm_config_https_proxy, npm_config_noproxy: npm and pnpm read their
//     config from npm_config_* variables, not from HTTP_PROXY.
//   - YARN_HTTP_PROXY, YARN_HTTPS_PROXY: yarn 2+.
//   - PIP_PROXY: pip's --proxy, so pip uses the proxy even where requests' env handling is off.
//   - CARGO_HTTP_PROXY: cargo's http.proxy.
//   - NODE_USE_ENV_PROXY=1: Node's own fetch/http (Node 24+) honour HTTP(S)_PROXY only then.
//   - JAVA_TOOL_OPTIONS: the JVM reads no proxy variables; -Dhttp(s).proxyHost/Port and
//     http.nonProxyHosts reach every JVM (Maven, Gradle, sbt). If the command's environment
//     already has JAVA_TOOL_OPTIONS, the caller should append this value to it.
func Env(httpAddr, socksAddr string) []string {
	httpURL := "http://" + httpAddr
	socksURL := "socks5h://" + socksAddr
	host, port, err := net.SplitHostPort(httpAddr)
	if err != nil {
		host, port = httpAddr, "80"
	}
	javaOpts := strings.Join([]string{
		"-Dhttp.proxyHost=" + host, "-Dhttp.proxyPort=" + port,
		"-Dhttps.proxyHost=" + host, "-Dhttps.proxyPort=" + port,
		"-Dhttp.nonProxyHosts=localhost|127.0.0.1|[::1]",
	}, " ")
	return []string{
		"HTTP_PROXY=" + httpURL,
		"HTTPS_PROXY=" + httpURL,
		"ALL_PROXY=" + socksURL,
		"NO_PROXY=" + NoProxy,
		"http_proxy=" + httpURL,
		"https_proxy=" + httpURL,
		"all_proxy=" + socksURL,
		"no_proxy=" + NoProxy,
		"npm_config_proxy=" + httpURL,
		"npm_config_https_proxy=" + httpURL,
		"npm_config_noproxy=" + NoProxy,
		"YARN_HTTP_PROXY=" + httpURL,
		"YARN_HTTPS_PROXY=" + httpURL,
		"PIP_PROXY=" + httpURL,
		"CARGO_HTTP_PROXY=" + httpURL,
		"NODE_USE_ENV_PROXY=1",
		"JAVA_TOOL_OPTIONS=" + javaOpts,
	}
}
