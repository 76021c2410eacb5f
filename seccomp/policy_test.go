package seccomp

import (
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func TestPolicyLists(t *testing.T) {
	checkVerdicts(t, Policy{
		Deny:  []string{"getcwd", "socket"},
		Allow: []string{"ptrace", "ioctl"},
	}, []verdictCase{
		{"denied by name", native64(unix.SYS_GETCWD), eperm},
		{"allowed by name", native64(unix.SYS_PTRACE), retAllow},
		{"still denied", native64(unix.SYS_BPF), eperm},
		{"socket denied outright", native64(unix.SYS_SOCKET, unix.AF_INET, unix.SOCK_STREAM), eperm},
		{"ioctl check lifted", native64(unix.SYS_IOCTL, 0, unix.TIOCSTI), retAllow},
		{"clone check kept", native64(unix.SYS_CLONE, unix.CLONE_NEWUSER), eperm},
		{"newer syscall allowed", native64(unix.SYS_LISTNS), retAllow},
	})
}

func TestPolicyNewerSyscalls(t *testing.T) {
	checkVerdicts(t, Policy{Deny: []string{"open_tree_attr"}}, []verdictCase{
		{"newer than libseccomp, denied by name", native64(unix.SYS_OPEN_TREE_ATTR), eperm},
	})
}

func TestPolicyErrno(t *testing.T) {
	checkVerdicts(t, Policy{Errno: "EACCES"}, []verdictCase{
		{"bpf", native64(unix.SYS_BPF), retErrno(unix.EACCES)},
		{"socket packet", native64(unix.SYS_SOCKET, unix.AF_PACKET, unix.SOCK_RAW), retErrno(unix.EACCES)},
		{"clone3 stays ENOSYS", native64(unix.SYS_CLONE3), retErrno(unix.ENOSYS)},
	})
}

func TestPolicyLog(t *testing.T) {
	checkVerdicts(t, Policy{Log: true}, []verdictCase{
		{"bpf logged", native64(unix.SYS_BPF), retLog},
		{"socket packet logged", native64(unix.SYS_SOCKET, unix.AF_PACKET, unix.SOCK_RAW), retLog},
		{"read", native64(unix.SYS_READ), retAllow},
		{"i386 still killed", call{arch: auditArchI386, nr: 20}, retKillProcess},
	})
}

func TestPolicyMPTCP(t *testing.T) {
	mptcp := native64(unix.SYS_SOCKET, unix.AF_INET, unix.SOCK_STREAM, unix.IPPROTO_MPTCP)
	checkVerdicts(t, Policy{BlockMPTCP: true}, []verdictCase{
		{"mptcp", mptcp, eperm},
		{"mptcp high bits", native64(unix.SYS_SOCKET, unix.AF_INET6, unix.SOCK_STREAM, 0xffffffff00000000|unix.IPPROTO_MPTCP), eperm},
		{"tcp", native64(unix.SYS_SOCKET, unix.AF_INET, unix.SOCK_STREAM, unix.IPPROTO_TCP), retAllow},
	})
	checkVerdicts(t, Policy{BlockMPTCP: true, Allow: []string{"socket"}}, []verdictCase{
		{"mptcp with socket allowed", mptcp, eperm},
		{"packet with socket allowed", native64(unix.SYS_SOCKET, unix.AF_PACKET, unix.SOCK_RAW), retAllow},
	})
}

func TestAllowList(t *testing.T) {
	p := Policy{
		Default: ModeDeny,
		Allow:   []string{"read", "write", "exit_group", "socket", "clone"},
	}
	checkVerdicts(t, p, []verdictCase{
		{"read", native64(unix.SYS_READ), retAllow},
		{"getpid not allowed", native64(unix.SYS_GETPID), eperm},
		{"bpf not allowed", native64(unix.SYS_BPF), eperm},
		{"clone3 falls back", native64(unix.SYS_CLONE3), retErrno(unix.ENOSYS)},
		{"allowed socket keeps its checks", native64(unix.SYS_SOCKET, unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_AUDIT), eperm},
		{"allowed socket", native64(unix.SYS_SOCKET, unix.AF_INET, unix.SOCK_STREAM), retAllow},
		{"allowed clone keeps its checks", native64(unix.SYS_CLONE, unix.CLONE_NEWUSER), eperm},
		{"newest known syscall", native64(uintptr(maxKnown())), eperm},
		{"newer than known", native64(uintptr(maxKnown() + 1)), retErrno(unix.ENOSYS)},
		{"far newer", native64(1000), retErrno(unix.ENOSYS)},
		{"x32 still killed", native64(x32SyscallBit | unix.SYS_READ), retKillProcess},
		{"i386 still killed", call{arch: auditArchI386, nr: 3}, retKillProcess},
	})
}

func TestPolicyErrors(t *testing.T) {
	for _, tc := range []struct {
		p    Policy
		want string
	}{
		{Policy{Deny: []string{"ptarce"}}, `unknown syscall "ptarce" (did you mean "ptrace"?)`},
		{Policy{Allow: []string{"io_uring_seup"}}, `did you mean "io_uring_setup"?`},
		{Policy{Deny: []string{"xyzzyplugh"}}, `unknown syscall "xyzzyplugh"`},
		{Policy{Deny: []string{"socketcall"}}, `unknown syscall "socketcall"`},
		{Policy{Default: "maybe"}, `syscalls default "maybe"`},
		{Policy{Default: ModeOff}, `there is no filter to compile`},
		{Policy{Errno: "EWHATEVER"}, `syscalls errno "EWHATEVER"`},
	} {
		_, err := Compile(tc.p)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Compile(%+v) = %v, want an error containing %q", tc.p, err, tc.want)
		}
	}
}

func TestKnownAndSuggest(t *testing.T) {
	for name, want := range map[string]bool{
		"read": true, "ptrace": true, "clone3": true, "listns": true, "open_tree_attr": true,
		"socketcall": false, "": false, "nosuchcall": false,
	} {
		if got := Known(name); got != want {
			t.Errorf("Known(%q) = %v, want %v", name, got, want)
		}
	}
	for name, want := range map[string]string{
		"ptrac": "ptrace", "perf_event_opn": "perf_event_open", "usrfaultfd": "userfaultfd",
		"qqqqqqqqqqqqqqqq": "",
	} {
		if got := Suggest(name); got != want {
			t.Errorf("Suggest(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestDefaultDenyIsKnown(t *testing.T) {
	for _, name := range slices.Concat(defaultDeny, enosysCalls) {
		if !Known(name) {
			t.Errorf("built-in denied syscall %q is not known on this architecture", name)
		}
	}
}

func TestDescribe(t *testing.T) {
	s, err := Describe(Policy{Allow: []string{"ptrace", "ioctl", "getpid"}, Deny: []string{"getcwd"}, BlockMPTCP: true})
	if err != nil {
		t.Fatal(err)
	}
	if s.Mode != ModeAllow || s.Action != "errno EPERM" {
		t.Errorf("mode %q action %q", s.Mode, s.Action)
	}
	if !slices.Contains(s.Denied, "getcwd") || !slices.Contains(s.Denied, "bpf") || slices.Contains(s.Denied, "ptrace") {
		t.Errorf("denied = %v", s.Denied)
	}
	if !slices.Equal(s.Widened, []string{"ptrace", "ioctl"}) {
		t.Errorf("widened = %v, want [ptrace ioctl]", s.Widened)
	}
	var checked []string
	for _, c := range s.Checks {
		checked = append(checked, c.Syscall)
	}
	if !slices.Equal(checked, []string{"socket", "socketpair", "clone", "unshare", "personality", "socket"}) {
		t.Errorf("checks on %v", checked)
	}
	if !slices.Equal(s.ENOSYS, []string{"clone3"}) {
		t.Errorf("enosys = %v", s.ENOSYS)
	}
	s, err = Describe(Policy{Default: ModeDeny, Allow: []string{"read", "clone3", "ptrace", "socket"}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(s.Widened, []string{"clone3", "ptrace"}) {
		t.Errorf("allow-list widened = %v, want [clone3 ptrace]", s.Widened)
	}
}
