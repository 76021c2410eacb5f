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
		cause     string // substring; "" means no known cause
	}{
		{"nothing", nil, false, 1000, "", false, ""},
		{"max_user_namespaces", map[string]string{SysctlMaxUserNS: "0"}, false, 0, "", false, "user.max_user_namespaces=0"},
		{"unprivileged_userns_clone", map[string]string{SysctlUnprivClone: "0"}, false, 1000, "", false, "unprivileged_userns_clone=0"},
		{"unprivileged_userns_clone spares root", map[string]string{SysctlUnprivClone: "0"}, false, 0, "", false, ""},
		{"apparmor", map[string]string{SysctlAppArmorRestrict: "1"}, false, 1000, "unconfined", false, "AppArmor"},
		{"apparmor with jail's profile", map[string]string{SysctlAppArmorRestrict: "1"}, false, 1000, "jail (unconfined)", false, ""},
		{"container seccomp", nil, true, 1000, "", false, "seccomp"},
		{"unmapped uid", nil, true, 65534, "", true, "no mapping"},
	} {
		st := State{Sysctl: sysctls(tc.sysctl), Seccomped: tc.seccomped, EUID: tc.euid, Label: tc.label, Unmapped: tc.unmapped}
		cause, fix := st.Refusal()
		switch {
		case tc.cause == "" && cause != "":
			t.Errorf("%s: cause %q, want none", tc.name, cause)
		case tc.cause != "" && (!strings.Contains(cause, tc.cause) || fix == ""):
			t.Errorf("%s: cause %q fix %q, want a cause naming %q and a fix", tc.name, cause, fix, tc.cause)
		}
	}
}
