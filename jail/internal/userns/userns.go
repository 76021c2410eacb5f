package userns

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
)

// Refusal names what keeps this process from using an unprivileged user namespace and the
// exact fix, or two empty strings when none of the known restrictions is in force. It is the one
// place that knows the causes: the launcher's error hint and `jail doctor` both ask it.
func Refusal() (cause, fix string) {
	return RefusalFrom(ReadSysctl, UnderSeccomp(), os.Geteuid(), AppArmorLabel())
}

// RefusalFrom is Refusal with the host's state given (for tests): the sysctl reader,
// whether a seccomp filter is already in force, the effective uid and this process's AppArmor
// label ("" without AppArmor).
func RefusalFrom(readSysctl func(string) string, seccomped bool, euid int, label string) (cause, fix string) {
	unprivileged := euid != 0 // root needs none of the unprivileged paths
	switch {
	case readSysctl(SysctlMaxUserNS) == "0":
		return "user namespaces are disabled by user.max_user_namespaces=0",
			"sudo sysctl -w user.max_user_namespaces=65536"
	case unprivileged && readSysctl(SysctlUnprivClone) == "0":
		return "unprivileged user namespaces are disabled by kernel.unprivileged_userns_clone=0",
			"sudo sysctl -w kernel.unprivileged_userns_clone=1"
	case unprivileged && readSysctl(SysctlAppArmorRestrict) == "1" && AppArmorUnconfined(label):
		exe, _ := os.Executable()
		if exe == "" {
			exe = "/usr/local/bin/jail"
		}
		return "AppArmor restricts unprivileged user namespaces (kernel.apparmor_restrict_unprivileged_userns=1)",
			"allow jail: printf 'abi <abi/4.0>,\\ninclude <tunables/global>\\nprofile jail " + exe +
				" flags=(unconfined) {\\n  userns,\\n}\\n' | sudo tee /etc/apparmor.d/jail && sudo apparmor_parser -r /etc/apparmor.d/jail"
	case seccomped:
		return "jail runs under a seccomp filter, likely a container's, that refuses user namespaces",
			"run the container with --security-opt seccomp=unconfined (or a profile allowing clone/unshare with CLONE_NEWUSER)"
	}
	return "", ""
}

// appArmorUnconfined reports whether an AppArmor label leaves the process to the unprivileged
// user-namespace restriction: only a profile with a `userns` rule (jail's own) lifts it.
func AppArmorUnconfined(label string) bool {
	return label == "" || label == "unconfined" || strings.HasPrefix(label, "unprivileged_userns")
}

// appArmorLabel is this process's AppArmor label ("unconfined", "jail (unconfined)", …), or ""
// when AppArmor is not active.
func AppArmorLabel() string {
	for _, p := range []string{"/proc/self/attr/apparmor/current", "/proc/self/attr/current"} {
		if b, err := os.ReadFile(p); err == nil {
			return strings.TrimSpace(strings.TrimRight(string(b), "\x00"))
		}
	}
	return ""
}

// Probe creates a user namespace the way the launcher does (a child cloned with
// CLONE_NEWUSER and this user's id mapped) and reports the kernel's refusal, if any. The child
// is this binary asked for its version; only whether the clone succeeds matters.
func Probe() error {
	uid, gid := os.Getuid(), os.Getgid()
	cmd := exec.Command("/proc/self/exe", "--version")
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}},
	}
	err := cmd.Start()
	if err != nil {
		var errno syscall.Errno
		if errors.As(err, &errno) {
			return errno
		}
		return err
	}
	cmd.Wait()
	return nil
}

// The sysctls that can each restrict unprivileged user namespaces.
const (
	SysctlUnprivClone      = "/proc/sys/kernel/unprivileged_userns_clone"
	SysctlMaxUserNS        = "/proc/sys/user/max_user_namespaces"
	SysctlAppArmorRestrict = "/proc/sys/kernel/apparmor_restrict_unprivileged_userns"
)

// Hint names the restriction that keeps this process from using a user namespace and the exact fix
// (Refusal knows them), or "" when none of the known ones is in force. Besides refusing clone(2),
// Ubuntu's AppArmor restriction lets the user namespace be created but strips its capabilities, so
// init's child fails with EPERM to create the other namespaces (spawn/spawn.c), which is reported
// as creating the namespaces too; should a setup step fail so instead, the hint is attached to that
// error as well.
func Hint() string {
	cause, fix := Refusal()
	if cause == "" {
		return ""
	}
	return cause + "; " + fix
}

// readSysctl returns the trimmed content of a /proc/sys file, or "" when it does not exist.
func ReadSysctl(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// underSeccomp reports whether this process already runs under a seccomp filter (mode 2).
func UnderSeccomp() bool {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return false
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Seccomp:"); ok {
			return strings.TrimSpace(v) == "2"
		}
	}
	return false
}
