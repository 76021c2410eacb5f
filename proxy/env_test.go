package proxy

import (
	"slices"
	"strings"
	"testing"
)

func TestEnv(t *testing.T) {
	env := map[string]string{}
	for _, kv := range SandboxEnv() {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	want := map[string]string{
		"HTTP_PROXY": "http://127.0.0.1:3128", "http_proxy": "http://127.0.0.1:3128",
		"HTTPS_PROXY": "http://127.0.0.1:3128", "https_proxy": "http://127.0.0.1:3128",
		"ALL_PROXY": "socks5h://127.0.0.1:1080", "all_proxy": "socks5h://127.0.0.1:1080",
		"NO_PROXY": "localhost,127.0.0.1,::1", "no_proxy": "localhost,127.0.0.1,::1",
		"npm_config_proxy": "http://127.0.0.1:3128", "npm_config_https_proxy": "http://127.0.0.1:3128",
		"PIP_PROXY": "http://127.0.0.1:3128", "CARGO_HTTP_PROXY": "http://127.0.0.1:3128",
	}
	for k, v := range want {
		if env[k] != v {
			t.Errorf("%s=%q, want %q", k, env[k], v)
		}
	}
	java := strings.Fields(env["JAVA_TOOL_OPTIONS"])
	for _, opt := range []string{"-Dhttp.proxyHost=127.0.0.1", "-Dhttp.proxyPort=3128", "-Dhttps.proxyHost=127.0.0.1", "-Dhttps.proxyPort=3128"} {
		if !slices.Contains(java, opt) {
			t.Errorf("JAVA_TOOL_OPTIONS lacks %s: %q", opt, env["JAVA_TOOL_OPTIONS"])
		}
	}
}
