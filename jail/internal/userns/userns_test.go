package userns

import (
	"strings"
	"testing"
)

func TestUserNSRefusal(t *testing.T) {
	sysctls := func(kv map[string]string) func(string) string {
		return func(p string) string { return kv[p] }
	}
	for _, tc := range []struct {
		name      string
		sysctl    map[string]string
		seccomped bool
		euid      int
		label     string
		unmapped  bool
		harness   string
		cause     string // substring; "" means no known cause
	}{
		{"nothing", nil, false, 1000, "", false, "", ""},
		{"max_user_namespaces", map[string]string{SysctlMaxUserNS: "0"}, false, 0, "", false, "", "user.max_user_namespaces=0"},
		{"unprivileged_userns_clone", map[string]string{SysctlUnprivClone: "0"}, false, 1000, "", false, "", "unprivileged_userns_clone=0"},
		{"unprivileged_userns_clone spares root", map[string]string{SysctlUnprivClone: "0"}, false, 0, "", false, "", ""},
		{"apparmor", map[string]string{SysctlAppArmorRestrict: "1"}, false, 1000, "unconfined", false, "", "AppArmor"},
		{"apparmor with jail's profile", map[string]string{SysctlAppArmorRestrict: "1"}, false, 1000, "jail (unconfined)", false, "", ""},
		{"container seccomp", nil, true, 1000, "", false, "", "seccomp"},
		{"unmapped uid", nil, true, 65534, "", true, "", "no mapping"},
		{"Claude Code's sandbox", map[string]string{SysctlMaxUserNS: "0"}, true, 1000, "", false, HarnessClaudeCode, "Claude Code's sandbox"},
		{"Codex's sandbox: its seccomp filter refuses steps, not the namespace", nil, true, 1000, "", false, HarnessCodex, "seccomp"},
	} {
		st := State{Sysctl: sysctls(tc.sysctl), Seccomped: tc.seccomped, EUID: tc.euid, Label: tc.label, Unmapped: tc.unmapped, Harness: tc.harness}
		cause, fix := st.Refusal()
		switch {
		case tc.cause == "" && cause != "":
			t.Errorf("%s: cause %q, want none", tc.name, cause)
		case tc.cause != "" && (!strings.Contains(cause, tc.cause) || fix == ""):
			t.Errorf("%s: cause %q fix %q, want a cause naming %q and a fix", tc.name, cause, fix, tc.cause)
		}
	}
}

func TestOuterHarness(t *testing.T) {
	for _, tc := range []struct {
		env      map[string]string
		pid1Comm string
		want     string
	}{
		{nil, "systemd", ""},
		{nil, "codex-linux-san", HarnessCodex}, // network on: no variable says so
		{nil, "codex", ""},
		{map[string]string{"CODEX_SANDBOX_NETWORK_DISABLED": "1"}, "bash", HarnessCodex},
		{map[string]string{"CODEX_SANDBOX": "seatbelt"}, "", HarnessCodex},
		{map[string]string{"SANDBOX_RUNTIME": "1", "CLAUDECODE": "1"}, "bwrap", HarnessClaudeCode},
		{map[string]string{"CLAUDECODE": "1"}, "systemd", ""}, // Claude Code without its sandbox
	} {
		if got := OuterHarness(func(k string) string { return tc.env[k] }, tc.pid1Comm); got != tc.want {
			t.Errorf("OuterHarness(%v, %q) = %q, want %q", tc.env, tc.pid1Comm, got, tc.want)
		}
	}
}
