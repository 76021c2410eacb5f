package jail

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/jail/internal/container"
	"github.com/jail-sandbox/jail/jail/internal/fail"
	"github.com/jail-sandbox/jail/jail/internal/userns"
	"github.com/jail-sandbox/jail/landlock"
	"github.com/jail-sandbox/jail/plan"
	"github.com/jail-sandbox/jail/workspace"
)

// Status is how a doctor check came out.
type Status string

// Check statuses: OK works; WARN works with a limitation the detail names; FAIL means jail's
// default run fails here (the fix says what makes it work).
const (
	StatusOK   Status = "OK"
	StatusWarn Status = "WARN"
	StatusFail Status = "FAIL"
)

// Check is one line of `jail doctor`: something jail relies on, and what it changes for the user.
type Check struct {
	Name   string `json:"name"`
	Status Status `json:"status"`
	Detail string `json:"detail"`
	Fix    string `json:"fix,omitempty"`
}

// fallbackFix is what a user without user namespaces can still do.
const fallbackFix = "or run without namespaces: jail --fallback landlock (it lists what that loses)"

// Doctor checks this host for what jail relies on, one Check per finding, in a fixed order. trial
// is a plan with the default run's namespaces, /proc, /dev and root, whose command exits 0:
// Doctor runs it in a real sandbox, the way jail runs every command (the same id maps, /proc
// mount and pivot_root), so its verdict is the next run's. It changes nothing on the host.
func Doctor(trial *plan.Spec) []Check {
	engine := container.Detect()
	t := runTrial(trial)
	return []Check{
		checkKernel(),
		checkContainer(engine),
		checkUserNS(t, engine),
		checkSandbox(t, engine),
		checkOverlay(trial, t),
		checkLandlock(),
		checkSeccomp(),
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

// trial is how a trial sandbox came out.
type trial struct {
	err     *fail.Error // jail's error; nil when the command ran and exited 0
	notices []string    // the "jail: notice:" lines init printed
	weaker  *trial      // where /proc was refused: the same trial with the plan's AllowWeaker
}

// runTrial runs spec in a sandbox, with stdio on /dev/null and init's stderr kept for its notices,
// and once more with AllowWeaker when the kernel refused the sandbox its own /proc.
func runTrial(spec *plan.Spec) *trial {
	t := &trial{}
	t.err, t.notices = runQuiet(spec)
	if t.err != nil && t.err.Op == string(plan.MountProc) && t.err.Errno == syscall.EPERM {
		weaker := *spec
		weaker.AllowWeaker = true
		t.weaker = &trial{}
		t.weaker.err, t.weaker.notices = runQuiet(&weaker)
	}
	return t
}

// runQuiet runs spec and returns jail's error, if any, and init's notices.
func runQuiet(spec *plan.Spec) (*fail.Error, []string) {
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return fail.New("open", os.DevNull, err), nil
	}
	defer null.Close()
	errs, err := os.CreateTemp("", "jail-doctor-")
	if err != nil {
		return fail.New("create a temporary file", "", err), nil
	}
	os.Remove(errs.Name())
	defer errs.Close()
	status, err := Run(spec, Options{}, Stdio{In: null, Out: null, Err: errs})
	var notices []string
	errs.Seek(0, io.SeekStart)
	if b, rerr := io.ReadAll(errs); rerr == nil {
		for line := range strings.SplitSeq(string(b), "\n") {
			if n, ok := strings.CutPrefix(line, "jail: notice: "); ok {
				notices = append(notices, n)
			}
		}
	}
	var e *fail.Error
	switch {
	case errors.As(err, &e):
		return e, notices
	case err != nil:
		return fail.New("trial sandbox", "", err), notices
	case status != 0:
		return &fail.Error{Op: "trial sandbox", Detail: fmt.Sprintf("the trial command exited %d", status), Exit: status}, notices
	}
	return nil, notices
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
		c.Detail += ": older than 5.13, no Landlock (5.12 or later builds the sandbox)"
		c.Fix = "upgrade to Linux 6.12 or later for every Landlock feature jail uses"
	}
	return c
}

// checkContainer names the container engine, whose options the fixes below are.
func checkContainer(engine container.Engine) Check {
	c := Check{Name: "container", Status: StatusOK}
	switch {
	case engine.Name == "":
		c.Detail = "not inside a container"
		if _, err := os.Lstat("/.dockerenv"); err == nil {
			c.Detail += " (/.dockerenv exists, but nothing else of Docker's does)"
		}
	case engine.Rootless:
		c.Detail = fmt.Sprintf("inside %s, rootless (%s): the fixes below are its options", engine.Name, engine.Evidence)
	default:
		c.Detail = fmt.Sprintf("inside %s (%s): the fixes below are its options", engine.Name, engine.Evidence)
	}
	return c
}

// checkUserNS reports whether the trial got its user namespace, with the ids it maps, and the
// cause and fix when it did not.
func checkUserNS(t *trial, engine container.Engine) Check {
	c := Check{Name: "user namespaces", Status: StatusOK, Detail: "created: " + idMapsDetail()}
	if t.err == nil || !refusedNamespaces(t.err) {
		if os.Geteuid() == 0 {
			c.Detail += " (as root; run jail doctor as an ordinary user to check theirs)"
		}
		return c
	}
	bare := *t.err
	bare.Hint = "" // the cause follows
	c.Status, c.Detail = StatusFail, bare.Error()
	cause, fix := userns.Known()
	if t.err.Op == opMapIDs {
		cause, fix = userns.MapRefusal()
	}
	switch {
	case cause != "":
		c.Detail += "; " + cause
		c.Fix = fix + "; " + fallbackFix
	case userns.UnderSeccomp() && engine.Name != "":
		c.Detail += fmt.Sprintf("; %s's seccomp policy refuses them", engine.Name)
		c.Fix = container.FixesFor(engine.Name).UserNS + "; " + fallbackFix
	case userns.UnderSeccomp():
		c.Detail += "; " + userns.Who("")
		c.Fix = container.FixesFor("").UserNS + "; " + fallbackFix
	default:
		c.Fix = fallbackFix
	}
	return c
}

// idMapsDetail says which ids the sandbox maps: every id for root on the host; the ids its
// namespace has for root in a nested or rootless container's; the caller's own otherwise.
func idMapsDetail() string {
	if os.Getuid() != 0 {
		return fmt.Sprintf("the sandbox maps uid %d and gid %d, itself", os.Getuid(), os.Getgid())
	}
	n, all := userns.OwnUIDs()
	switch {
	case !userns.MapsRange():
		return "the sandbox maps root alone (jail holds no CAP_SETUID and CAP_SETGID to map more): files of other owners show as nobody"
	case all:
		return "the sandbox maps every uid and gid, root as root"
	}
	uids := "uids"
	if n == 1 {
		uids = "uid"
	}
	return fmt.Sprintf("jail runs in a user namespace with %d %s (a nested or rootless container's): "+
		"the sandbox maps those, root as root; files of other owners show as nobody", n, uids)
}

// checkSandbox reports the trial sandbox: whether it ran, and where the kernel refused a step,
// the cause and what works instead, tried.
func checkSandbox(t *trial, engine container.Engine) Check {
	c := Check{Name: "sandbox", Status: StatusOK}
	fixes := container.FixesFor(engine.Name)
	switch {
	case t.err == nil:
		c.Detail = "a trial sandbox ran: its own namespaces, a /proc of its own, pivot_root into a new root, seccomp and Landlock"
		if len(t.notices) > 0 {
			c.Detail += "; " + strings.Join(t.notices, "; ")
		}
	case refusedNamespaces(t.err):
		c.Status, c.Detail = StatusWarn, "not probed: no user namespaces"
	case t.weaker != nil:
		masked := container.MaskedProc()
		c.Status = StatusFail
		c.Detail = "the kernel refuses the sandbox a /proc of its own: the container masks parts of its /proc"
		if len(masked) > 0 {
			c.Detail += " (" + strings.Join(masked, ", ") + ")"
		}
		c.Fix = fixes.Proc
		if fixes.All != "" {
			c.Fix += " (or " + fixes.All + ")"
		}
		if t.weaker.err == nil {
			c.Fix += "; or jail --allow-weaker (tried here: it runs, with the container's /proc, which lists the container's processes)"
		} else {
			c.Detail += "; with --allow-weaker: " + t.weaker.err.Error()
		}
	default:
		c.Status, c.Detail = StatusFail, t.err.Error()
		switch {
		case t.err.Errno == syscall.EPERM && strings.Contains(userns.AppArmorLabel(), "docker"):
			c.Fix = fixes.AppArmor
		case t.err.Errno == syscall.EPERM && userns.UnderSeccomp():
			c.Fix = fixes.UserNS
		default:
			c.Fix = "jail -v -- true shows each step of the sandbox's setup"
		}
	}
	return c
}

// checkOverlay tries git commit mode's overlay (the agent-commit profile) in a trial sandbox:
// trial's plan with an overlay of empty host directories added. A refusal is a WARN: the default
// run does not need it.
func checkOverlay(spec *plan.Spec, t *trial) Check {
	c := Check{Name: "overlay", Status: StatusOK, Detail: "an overlay mounts in the sandbox: --workspace overlay and git commit mode (-p agent-commit) work"}
	if t.err != nil {
		c.Status, c.Detail = StatusWarn, "not probed: the sandbox itself fails"
		return c
	}
	dir, err := os.MkdirTemp("", "jail-doctor-")
	if err != nil {
		c.Status, c.Detail = StatusWarn, "not probed: "+err.Error()
		return c
	}
	defer workspace.RemoveTree(dir) // overlayfs leaves work/work mode 0
	for _, d := range []string{"lower", "upper", "work"} {
		os.Mkdir(filepath.Join(dir, d), 0o700)
	}
	withOverlay := *spec
	withOverlay.Mounts = append(slices.Clone(spec.Mounts), plan.Mount{Kind: plan.MountOverlay, Source: filepath.Join(dir, "lower"),
		Upper: filepath.Join(dir, "upper"), Work: filepath.Join(dir, "work"), Target: "/overlay", IsDir: true})
	if e, _ := runQuiet(&withOverlay); e != nil {
		bare := *e
		bare.Hint = "" // the fix
		c.Status = StatusWarn
		c.Detail = "--workspace overlay and git commit mode (-p agent-commit) fail here; nothing else needs an overlay: " + bare.Error()
		c.Fix = e.Hint
		if c.Fix == "" {
			c.Fix = "an overlay needs overlayfs in a user namespace (Linux 5.11 or later)"
		}
	}
	return c
}

func checkLandlock() Check {
	abi := landlock.ABI()
	c := Check{Name: "landlock", Status: StatusOK, Detail: fmt.Sprintf("ABI %d", abi)}
	missing := landlock.Missing(landlock.Config{RestrictTCP: true, Scope: true})
	switch {
	case abi == 0:
		c.Status = StatusWarn
		c.Detail = "not available (kernel older than 5.13, or landlock not in the lsm= boot list): the sandbox runs without its Landlock layer, and a profile with [landlock] mode = \"required\" fails"
		c.Fix = "boot with lsm=landlock,… (see /sys/kernel/security/lsm) on Linux 5.13 or later"
	case len(missing) > 0:
		c.Status = StatusWarn
		c.Detail += "; the sandbox runs without " + strings.Join(missing, ", ") + " (best-effort mode)"
		c.Fix = "upgrade to Linux 6.12 or later"
	default:
		c.Detail += ": filesystem, TCP ports, signal and abstract-socket scoping"
	}
	return c
}

func checkSeccomp() Check {
	c := Check{Name: "seccomp", Status: StatusOK, Detail: "filters available"}
	action := uint32(unix.SECCOMP_RET_ERRNO)
	if _, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_GET_ACTION_AVAIL, 0, uintptr(unsafe.Pointer(&action))); e != 0 {
		c.Status, c.Detail = StatusFail, "seccomp filters unavailable: "+errText(e)
		c.Fix = "use a kernel built with CONFIG_SECCOMP_FILTER"
		return c
	}
	if userns.UnderSeccomp() {
		c.Detail += "; jail runs under a filter already (a container's?): what it refuses stays refused in the sandbox"
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
