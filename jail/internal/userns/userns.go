package userns

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/jail/internal/restrict"
)

// State is what decides whether this process may use a user namespace.
type State struct {
	Sysctl    func(path string) string // reads a /proc/sys file: "" when it does not exist
	Seccomped bool                     // a seccomp filter is in force already (a container's?)
	EUID      int
	Label     string // this process's AppArmor label; "" without AppArmor
	Unmapped  bool   // the euid or egid has no mapping in jail's own user namespace
	Harness   string // the agent harness whose own sandbox jail runs in (OuterHarness), "" for none
}

// Current is this process's State.
func Current() State {
	return State{Sysctl: ReadSysctl, Seccomped: UnderSeccomp(), EUID: os.Geteuid(), Label: AppArmorLabel(),
		Unmapped: Unmapped(), Harness: outerHarness()}
}

// Refusal names what keeps this process from using an unprivileged user namespace and the
// exact fix, or two empty strings when none of the known restrictions is in force. It is the one
// place that knows the causes: the launcher's error hint and `jail doctor` both ask it.
func Refusal() (cause, fix string) {
	return Current().Refusal()
}

// Refusal is the package's Refusal for the state s.
func (s State) Refusal() (cause, fix string) {
	unprivileged := s.EUID != 0 // root needs none of the unprivileged paths
	switch {
	case s.Harness == HarnessClaudeCode && s.Sysctl(SysctlMaxUserNS) == "0":
		return claudeCodeRefusal, claudeCodeFix
	case s.Unmapped:
		return fmt.Sprintf("jail's uid %d has no mapping in the user namespace it runs in (one made without a map, as by unshare -U alone), and the kernel gives an unmapped user no user namespace", s.EUID),
			"map it (unshare -U -r, or --map-user and --map-group), or run jail outside that namespace"
	case s.Sysctl(SysctlMaxUserNS) == "0":
		return "user namespaces are disabled by user.max_user_namespaces=0",
			"sudo sysctl -w user.max_user_namespaces=65536"
	case unprivileged && s.Sysctl(SysctlUnprivClone) == "0":
		return "unprivileged user namespaces are disabled by kernel.unprivileged_userns_clone=0",
			"sudo sysctl -w kernel.unprivileged_userns_clone=1"
	case s.capsStripped():
		exe, _ := os.Executable()
		if exe == "" {
			exe = "/usr/local/bin/jail"
		}
		return "AppArmor restricts unprivileged user namespaces (kernel.apparmor_restrict_unprivileged_userns=1)",
			"allow jail: printf 'abi <abi/4.0>,\\ninclude <tunables/global>\\nprofile jail " + exe +
				" flags=(unconfined) {\\n  userns,\\n}\\n' | sudo tee /etc/apparmor.d/jail && sudo apparmor_parser -r /etc/apparmor.d/jail"
	case s.Seccomped:
		return "jail runs under a seccomp filter, likely a container's, that refuses user namespaces",
			"run the container with --security-opt seccomp=unconfined (or a profile allowing clone/unshare with CLONE_NEWUSER)"
	}
	return "", ""
}

// MapRefusal names what keeps the kernel from taking the id maps of a user namespace jail did
// create, and the fix, or two empty strings when jail does not know. Root may map itself (uid 0)
// into a new namespace only with CAP_SETFCAP (Linux 5.12), which a container's dropped
// capabilities take away. And jail writes the maps at /proc/PID, which is another process, or
// none, where /proc shows another pid namespace than jail's own.
func MapRefusal() (cause, fix string) {
	if procForeign() {
		if outerHarness() == HarnessClaudeCode {
			return claudeCodeProcRefusal, claudeCodeProcFix
		}
		return "jail's /proc shows another pid namespace than its own, so jail cannot reach the id maps of the sandbox it starts",
			"mount a /proc of jail's pid namespace where it runs, " + fallbackFix
	}
	if os.Geteuid() != 0 || restrict.Holds(unix.CAP_SETFCAP) {
		return "", ""
	}
	if outerHarness() == HarnessCodex {
		return codexRootRefusal, codexRootFix
	}
	return "root may map itself into a new user namespace only with CAP_SETFCAP, which jail was not given (a container's dropped capabilities)",
		"give it CAP_SETFCAP (docker or podman run --cap-add SETFCAP; Kubernetes: capabilities.add: [SETFCAP]), or run jail as an ordinary user"
}

// MapsRange reports whether root may map more than itself into a new user namespace: it holds
// CAP_SETUID and CAP_SETGID (spawn.c's jail_write_id_maps maps root alone otherwise).
func MapsRange() bool {
	return restrict.Holds(unix.CAP_SETUID) && restrict.Holds(unix.CAP_SETGID)
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

// The sysctls that can each restrict unprivileged user namespaces.
const (
	SysctlUnprivClone      = "/proc/sys/kernel/unprivileged_userns_clone"
	SysctlMaxUserNS        = "/proc/sys/user/max_user_namespaces"
	SysctlAppArmorRestrict = "/proc/sys/kernel/apparmor_restrict_unprivileged_userns"
)

// Known is Refusal without the seccomp filter jail may run under: a cause that holds whatever
// that filter allows, which its engine's option would not lift.
func Known() (cause, fix string) {
	s := Current()
	s.Seccomped = false
	return s.Refusal()
}

// Who says who refuses jail user namespaces, for a notice: a cause Refusal knows, engine's
// seccomp policy when jail runs under a filter in a container (engine "" outside one), or "" when
// jail cannot tell.
func Who(engine string) string {
	cause, _ := Known()
	switch {
	case cause != "":
		return cause
	case outerHarness() == HarnessCodex:
		if cause, _ := MapRefusal(); cause != "" {
			return cause
		}
		return codexStepRefusal
	case UnderSeccomp() && engine != "":
		return engine + "'s seccomp policy refuses them"
	case UnderSeccomp():
		return "a seccomp filter jail runs under, a container's most likely, refuses them"
	}
	return ""
}

// Unmapped reports whether this process's effective uid or gid has no mapping in its user
// namespace: the namespace has no map yet (an unshare -U without one), so ids read as the
// overflow id and the kernel creates no user namespace for the process.
func Unmapped() bool {
	return !mapped("/proc/self/uid_map", os.Geteuid()) || !mapped("/proc/self/gid_map", os.Getegid())
}

// OwnUIDs returns how many uids this process's user namespace has, and whether that is every
// uid, mapped onto itself: the initial user namespace, not a nested or rootless container's.
func OwnUIDs() (n uint64, all bool) {
	b, err := os.ReadFile("/proc/self/uid_map")
	if err != nil {
		return 1 << 32, true // no user namespaces at all
	}
	for _, r := range ParseIDMap(string(b)) {
		n += uint64(r.Count)
	}
	return n, strings.Join(strings.Fields(string(b)), " ") == "0 0 4294967295"
}

// mapped reports whether id lies inside one of the ranges of the id map file at path.
func mapped(path string, id int) bool {
	b, err := os.ReadFile(path)
	if err != nil {
		return true // no user namespaces at all: nothing to say here
	}
	_, ok := MapID(ParseIDMap(string(b)), id)
	return ok
}

// IDRange is a line of a uid_map or gid_map: Count ids from Inside, which the parent user
// namespace knows from Outside.
type IDRange struct{ Inside, Outside, Count int }

// ParseIDMap returns the ranges of an id map file's text, skipping a line that is not three
// numbers. Parsed by hand: fmt's scanner took 10 times as long warm, and jail's state directory
// reads the map at every start.
func ParseIDMap(text string) []IDRange {
	var ranges []IDRange
	for line := range strings.Lines(text) {
		f := strings.Fields(line)
		if len(f) != 3 {
			continue
		}
		inside, err1 := strconv.Atoi(f[0])
		outside, err2 := strconv.Atoi(f[1])
		count, err3 := strconv.Atoi(f[2])
		if err1 == nil && err2 == nil && err3 == nil {
			ranges = append(ranges, IDRange{inside, outside, count})
		}
	}
	return ranges
}

// MapID returns id as the parent user namespace knows it, and whether one of ranges holds it.
func MapID(ranges []IDRange, id int) (int, bool) {
	for _, r := range ranges {
		if id >= r.Inside && id-r.Inside < r.Count {
			return r.Outside + id - r.Inside, true
		}
	}
	return id, false
}

// Hint names the restriction that keeps this process from creating a user namespace and the exact
// fix (Refusal knows them), or "" when none of the known ones is in force.
func Hint() string {
	cause, fix := Refusal()
	if cause == "" {
		return ""
	}
	return cause + "; " + fix
}

// StepHint names what refuses a step of the sandbox's setup with EPERM in a user namespace jail
// did create, or "". Ubuntu's AppArmor restriction lets the namespace be created but strips its
// capabilities (init's child then fails to create the other namespaces, reported as creating the
// namespaces, or a later step fails); a seccomp filter jail runs under (a container's) may refuse
// a step's system call.
func StepHint() string {
	switch {
	case CapsStripped():
		return Hint()
	case UnderSeccomp() && outerHarness() == HarnessCodex:
		return codexStepRefusal + "; " + codexStepFix
	case UnderSeccomp():
		return "jail runs under a seccomp filter, a container's most likely, which may refuse this step; " +
			"run the container with --security-opt seccomp=unconfined (jail doctor names its engine's option)"
	}
	return ""
}

// CapsStripped reports whether Ubuntu's AppArmor restriction applies to jail: user namespaces
// are created, but hold no capabilities.
func CapsStripped() bool {
	return State{Sysctl: ReadSysctl, EUID: os.Geteuid(), Label: AppArmorLabel()}.capsStripped()
}

func (s State) capsStripped() bool {
	return s.EUID != 0 && s.Sysctl(SysctlAppArmorRestrict) == "1" && AppArmorUnconfined(s.Label)
}

// readSysctl returns the trimmed content of a /proc/sys file, or "" when it does not exist.
func ReadSysctl(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// UnderSeccomp reports whether this process already runs under a seccomp filter (mode 2). It
// asks prctl(PR_GET_SECCOMP), a tenth of a microsecond (the host asks it on every run, canLeave);
// /proc/self/status, read where a filter refuses that, costs some 40 µs.
func UnderSeccomp() bool {
	if mode, err := unix.PrctlRetInt(unix.PR_GET_SECCOMP, 0, 0, 0, 0); err == nil {
		return mode == 2
	}
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
