package jail

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/jail/internal/userns"
	"github.com/jail-sandbox/jail/landlock"
)

// Status is how a doctor check came out.
type Status string

// Check statuses: OK works; WARN works with a limitation (or does not matter for jail's default
// run); FAIL means jail cannot run its default sandbox here.
const (
	StatusOK   Status = "OK"
	StatusWarn Status = "WARN"
	StatusFail Status = "FAIL"
)

// Check is one line of `jail doctor`: a kernel feature or host restriction jail depends on.
type Check struct {
	Name   string `json:"name"`
	Status Status `json:"status"`
	Detail string `json:"detail"`
	Fix    string `json:"fix,omitempty"`
}

// fallbackFix is what a user without user namespaces can still do.
const fallbackFix = "or run without namespaces: jail --fallback landlock (it lists what that loses)"

// Doctor probes this host for everything jail uses, one Check per capability, in a fixed order.
// It changes nothing: probes run in short-lived children or ask the kernel without applying.
func Doctor() []Check {
	userns := checkUserNS()
	return []Check{
		checkKernel(),
		userns,
		checkLandlock(),
		checkSeccomp(),
		checkOverlay(userns.Status == StatusFail),
		checkCgroup(),
		checkContainer(userns.Status == StatusFail),
		checkAppArmor(),
	}
}

// PrintDoctor writes checks as aligned text lines (a "fix:" line under each that has one) or as
// a JSON array, and returns the exit status for `jail doctor`: 1 when any check failed, else 0.
func PrintDoctor(w io.Writer, checks []Check, asJSON bool) int {
	status := 0
	for _, c := range checks {
		if c.Status == StatusFail {
			status = 1
		}
	}
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		if err := enc.Encode(checks); err != nil {
			return 1
		}
		return status
	}
	for _, c := range checks {
		fmt.Fprintf(w, "%-4s  %-16s  %s\n", c.Status, c.Name, c.Detail)
		if c.Fix != "" {
			fmt.Fprintf(w, "%-4s  %-16s  fix: %s\n", "", "", c.Fix)
		}
	}
	return status
}

// kernelRelease returns uname -r and its leading major and minor numbers.
func kernelRelease() (release string, major, minor int) {
	var u unix.Utsname
	if unix.Uname(&u) != nil {
		return "unknown", 0, 0
	}
	release = unix.ByteSliceToString(u.Release[:])
	fmt.Sscanf(release, "%d.%d", &major, &minor)
	return release, major, minor
}

func checkKernel() Check {
	release, major, minor := kernelRelease()
	c := Check{Name: "kernel", Status: StatusOK, Detail: "Linux " + release}
	if major < 5 || (major == 5 && minor < 13) {
		c.Status = StatusWarn
		c.Detail += ": older than 5.13, no Landlock"
		c.Fix = "upgrade to Linux 6.12 or later for every Landlock feature jail uses"
	}
	return c
}

func checkUserNS() Check {
	c := Check{Name: "user namespaces", Status: StatusOK, Detail: fmt.Sprintf("can be created by uid %d", os.Geteuid())}
	err := userns.Probe()
	cause, fix := userns.Refusal()
	switch {
	case err != nil && cause != "":
		c.Status, c.Detail, c.Fix = StatusFail, fmt.Sprintf("refused (%s): %s", errText(err), cause), fix+"; "+fallbackFix
	case err != nil:
		c.Status, c.Detail, c.Fix = StatusFail, fmt.Sprintf("clone(CLONE_NEWUSER) refused: %s", errText(err)), fallbackFix
	case cause != "":
		// Created, but a restriction (AppArmor) strips the namespace's capabilities.
		c.Status, c.Detail, c.Fix = StatusFail, "created but unusable: "+cause, fix+"; "+fallbackFix
	case os.Geteuid() == 0:
		c.Detail += " (root; run `jail doctor` as an ordinary user to check theirs)"
	}
	return c
}

func errText(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return unix.ErrnoName(errno) + " " + errno.Error()
	}
	return err.Error()
}

func checkLandlock() Check {
	abi := landlock.ABI()
	c := Check{Name: "landlock", Status: StatusOK, Detail: fmt.Sprintf("ABI %d", abi)}
	missing := landlock.Missing(landlock.Config{RestrictTCP: true, Scope: true})
	switch {
	case abi == 0:
		c.Status, c.Detail = StatusFail, "not available (kernel older than 5.13, or landlock not in the lsm= boot list)"
		c.Fix = "boot with lsm=landlock,… (see /sys/kernel/security/lsm) on Linux 5.13 or later"
	case len(missing) > 0:
		c.Status = StatusWarn
		c.Detail += "; best-effort mode leaves out " + strings.Join(missing, ", ")
		c.Fix = "upgrade to Linux 6.12 or later"
	default:
		c.Detail += ": filesystem, TCP ports, signal and abstract-socket scoping"
	}
	return c
}

func checkSeccomp() Check {
	c := Check{Name: "seccomp", Status: StatusOK}
	action := uint32(unix.SECCOMP_RET_ERRNO)
	if _, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_GET_ACTION_AVAIL, 0, uintptr(unsafe.Pointer(&action))); e != 0 {
		c.Status, c.Detail = StatusFail, "seccomp filters unavailable: "+errText(e)
		c.Fix = "use a kernel built with CONFIG_SECCOMP_FILTER"
		return c
	}
	c.Detail = "filters available"
	// A known flag with no program fails with EFAULT; an unknown one with EINVAL.
	_, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC, 0)
	if e == unix.EFAULT {
		c.Detail += ", TSYNC available"
	} else {
		c.Status = StatusWarn
		c.Detail += ", TSYNC unavailable (" + errText(e) + ")"
		c.Fix = "upgrade to Linux 3.17 or later"
	}
	if userns.UnderSeccomp() {
		c.Detail += "; jail itself already runs under a seccomp filter (a container's?)"
	}
	return c
}

// checkOverlay mounts an overlay in a throwaway user and mount namespace, as a rootless overlay
// would be used, with the host's mount(8) as the child.
func checkOverlay(noUserNS bool) Check {
	c := Check{Name: "overlayfs userns", Status: StatusOK, Detail: "overlay mounts in a user namespace"}
	if noUserNS {
		c.Status, c.Detail = StatusWarn, "not probed: no user namespaces"
		return c
	}
	mount, err := exec.LookPath("mount")
	if err != nil {
		c.Status, c.Detail = StatusWarn, "not probed: no mount(8) on PATH"
		return c
	}
	dir, err := os.MkdirTemp("", "jail-doctor-")
	if err != nil {
		c.Status, c.Detail = StatusWarn, "not probed: "+err.Error()
		return c
	}
	defer os.RemoveAll(dir)
	opts := "lowerdir=" + dir + "/l,upperdir=" + dir + "/u,workdir=" + dir + "/w"
	for _, d := range []string{"l", "u", "w", "m"} {
		os.Mkdir(filepath.Join(dir, d), 0o700)
	}
	cmd := exec.Command(mount, "-t", "overlay", "overlay", "-o", opts, filepath.Join(dir, "m"))
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}},
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		c.Status = StatusWarn
		c.Detail = "overlay mount refused in a user namespace: " + strings.TrimSpace(string(out))
		c.Fix = "Linux 5.11 or later allows it (jail's sandbox does not need overlayfs today)"
	}
	return c
}

// checkCgroup reports whether this process's cgroup v2 is delegated to the caller, which limits
// by cgroup (memory, pids) would need.
func checkCgroup() Check {
	c := Check{Name: "cgroup v2", Status: StatusWarn}
	root := "/sys/fs/cgroup"
	if _, err := os.Stat(filepath.Join(root, "cgroup.controllers")); err != nil {
		root = "/sys/fs/cgroup/unified"
		if _, err := os.Stat(filepath.Join(root, "cgroup.controllers")); err != nil {
			c.Detail = "no cgroup v2 hierarchy mounted"
			c.Fix = "boot with systemd.unified_cgroup_hierarchy=1 (jail's limits use rlimits today)"
			return c
		}
		c.Detail = "hybrid hierarchy (v2 at " + root + ", controllers on v1); "
	}
	own := ""
	if b, err := os.ReadFile("/proc/self/cgroup"); err == nil {
		for line := range strings.SplitSeq(string(b), "\n") {
			if p, ok := strings.CutPrefix(line, "0::"); ok {
				own = p
			}
		}
	}
	dir := filepath.Join(root, own)
	if unix.Access(filepath.Join(dir, "cgroup.procs"), unix.W_OK) != nil || unix.Access(dir, unix.W_OK) != nil {
		c.Detail += fmt.Sprintf("%s is not delegated to uid %d", dir, os.Geteuid())
		c.Fix = "run jail in a delegated scope: systemd-run --user --scope -p Delegate=yes jail … (jail's limits use rlimits today)"
		return c
	}
	b, _ := os.ReadFile(filepath.Join(dir, "cgroup.controllers"))
	ctl := strings.Fields(string(b))
	c.Detail += fmt.Sprintf("%s delegated (controllers: %s)", dir, strings.Join(ctl, " "))
	for _, want := range []string{"memory", "pids"} {
		if !slices.Contains(ctl, want) {
			c.Detail += "; no " + want + " controller"
			c.Fix = "enable it for the delegated subtree (cgroup.subtree_control); jail's limits use rlimits today"
			return c
		}
	}
	c.Status = StatusOK
	return c
}

// container names the container runtime this process runs under, or "".
func container() string {
	switch {
	case fileExists("/.dockerenv"):
		return "docker"
	case fileExists("/run/.containerenv"):
		return "podman"
	}
	if v := os.Getenv("container"); v != "" {
		return v
	}
	if b, err := os.ReadFile("/proc/1/environ"); err == nil {
		for kv := range strings.SplitSeq(string(b), "\x00") {
			if v, ok := strings.CutPrefix(kv, "container="); ok {
				return v
			}
		}
	}
	if b, err := os.ReadFile("/proc/1/cgroup"); err == nil {
		for _, k := range []string{"docker", "kubepods", "lxc", "containerd"} {
			if strings.Contains(string(b), k) {
				return k
			}
		}
	}
	return ""
}

func fileExists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

func checkContainer(noUserNS bool) Check {
	c := Check{Name: "container", Status: StatusOK, Detail: "not inside a container"}
	name := container()
	if name == "" {
		return c
	}
	c.Detail = "inside " + name
	if noUserNS {
		c.Status = StatusWarn
		c.Detail += ", which refuses user namespaces"
		c.Fix = "docker/podman run --security-opt seccomp=unconfined --security-opt apparmor=unconfined …; " + fallbackFix
	} else {
		c.Detail += "; user namespaces work here"
	}
	return c
}

func checkAppArmor() Check {
	c := Check{Name: "apparmor userns", Status: StatusOK}
	v := userns.ReadSysctl(userns.SysctlAppArmorRestrict)
	label := userns.AppArmorLabel()
	switch {
	case v == "":
		c.Detail = "no AppArmor user-namespace restriction in this kernel"
	case v != "1":
		c.Detail = "kernel.apparmor_restrict_unprivileged_userns=" + v + " (not restricted)"
	case os.Geteuid() == 0 || !userns.AppArmorUnconfined(label):
		c.Detail = "restriction on, but it does not apply to jail here (label " + label + ")"
	default:
		_, fix := userns.RefusalFrom(userns.ReadSysctl, false, os.Geteuid(), label)
		c.Status, c.Detail, c.Fix = StatusFail, "kernel.apparmor_restrict_unprivileged_userns=1 applies to jail", fix
	}
	return c
}
