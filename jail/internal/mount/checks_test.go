package mount

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// Paths of the main scenario inside the sandbox: the fixture's ro/ is bound at /ro, its rw/ at
// its own host path (as profiles binds the working directory), $HOME is a tmpfs at /home/u.
const (
	roDir   = "/ro"
	homeDir = "/home/u"
)

func rwDir(fixture string) string { return fixture + "/rw" }

// mountChecks run inside the sandbox after SetupRoot; each attempts something and returns an
// error when the kernel's answer is not the expected one.
var mountChecks = map[string]func(fixture string) error{
	"ro-bind is read-only": func(string) error {
		return errors.Join(
			wantErrno(writeFile(roDir+"/file"), unix.EROFS, "write "+roDir+"/file"),
			wantErrno(writeFile(roDir+"/new"), unix.EROFS, "create "+roDir+"/new"),
			wantContent(roDir+"/file", "ro"),
		)
	},
	"ro-bind submount is read-only and keeps its locked flags": func(string) error {
		var st unix.Statfs_t
		if err := unix.Statfs(roDir+"/sub", &st); err != nil {
			return err
		}
		want := int64(unix.ST_RDONLY | unix.ST_NOSUID | unix.ST_NODEV | unix.ST_NOEXEC)
		var flagErr error
		if st.Flags&want != want {
			flagErr = fmt.Errorf("statfs %s flags %#x, want %#x set", roDir+"/sub", st.Flags, want)
		}
		// The flags are locked: a remount that leaves them out (as a classic remount-read-only
		// would) is refused, so the test is not vacuous.
		unlock := unix.Mount("", roDir+"/sub", "", unix.MS_REMOUNT|unix.MS_BIND|unix.MS_RDONLY, "")
		return errors.Join(flagErr,
			wantErrno(unlock, unix.EPERM, "remount "+roDir+"/sub without its locked flags"),
			wantErrno(writeFile(roDir+"/sub/new"), unix.EROFS, "create "+roDir+"/sub/new"),
			wantContent(roDir+"/sub/inside", "sub"),
		)
	},
	"bind is writable": func(f string) error {
		return os.WriteFile(rwDir(f)+"/written", []byte("from inside"), 0o644)
	},
	"protected file is read-only": func(f string) error {
		p := rwDir(f) + "/.git/config"
		return errors.Join(
			wantErrno(writeFile(p), unix.EROFS, "write "+p),
			wantErrno(os.Remove(p), unix.EBUSY, "remove "+p),
			wantContent(p, "[core]"),
		)
	},
	"protected dir is read-only": func(f string) error {
		p := rwDir(f) + "/.git/hooks/pre-commit"
		return wantErrno(writeFile(p), unix.EROFS, "create "+p)
	},
	"missing protected file cannot be created": func(f string) error {
		p := rwDir(f) + "/.envrc" // the host's placeholder, a socket: nothing opens one
		return wantErrno(writeFile(p), unix.ENXIO, "write "+p)
	},
	"missing protected dir cannot be filled": func(f string) error {
		p := rwDir(f) + "/.vscode/settings.json"
		return wantErrno(writeFile(p), unix.ENOTDIR, "create "+p)
	},
	"pinned parent of a protected path cannot be renamed": func(f string) error {
		rw := rwDir(f)
		return errors.Join(
			wantErrno(os.Rename(rw+"/.git", rw+"/git2"), unix.EBUSY, "rename .git"),
			wantErrno(os.Rename(rw+"/.envrc", rw+"/envrc2"), unix.EBUSY, "rename .envrc"),
			wantErrno(os.Rename(rw+"/.jj", rw+"/jj2"), unix.EBUSY, "rename .jj"),
			wantErrno(os.Remove(rw+"/.jj/repo"), unix.EBUSY, "remove .jj/repo"),
			wantErrno(writeFile(rw+"/.jj/repo/x"), unix.ENOTDIR, "create .jj/repo/x"),
			writeFile(rw+"/.jj/writable"), // the pinned directory itself stays writable
		)
	},
	"hide-dir shows an empty directory": func(f string) error {
		p := rwDir(f) + "/secret"
		names, err := dirNames(p)
		if err == nil && len(names) != 0 {
			err = fmt.Errorf("%s lists %v, want nothing", p, names)
		}
		return errors.Join(err, wantErrno(writeFile(p+"/key"), unix.EROFS, "create "+p+"/key"))
	},
	"hide-file reads empty": func(f string) error {
		p := rwDir(f) + "/token"
		// Writing is allowed, as to any device node on a read-only mount; it goes to /dev/null.
		return errors.Join(writeFile(p), wantContent(p, ""))
	},
	"proc shows only the sandbox's pids": func(string) error {
		names, err := dirNames("/proc")
		if err != nil {
			return err
		}
		pids := slices.DeleteFunc(names, func(n string) bool {
			_, err := strconv.Atoi(n)
			return err != nil
		})
		if !slices.Equal(pids, []string{"1"}) || os.Getpid() != 1 {
			return fmt.Errorf("/proc lists pids %v and this is pid %d; want only pid 1", pids, os.Getpid())
		}
		return wantErrno(writeFile("/proc/sys/kernel/hostname"), unix.EROFS, "write /proc/sys/kernel/hostname")
	},
	"dev has only the listed nodes": func(string) error {
		names, err := dirNames("/dev")
		if err != nil {
			return err
		}
		want := []string{"fd", "full", "null", "ptmx", "pts", "random", "shm", "stderr", "stdin", "stdout", "tty", "urandom", "zero"}
		if !slices.Equal(names, want) {
			return fmt.Errorf("/dev holds %v, want %v", names, want)
		}
		var ptyErr error
		if pty, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0); err != nil {
			ptyErr = fmt.Errorf("open /dev/ptmx: %w", err)
		} else {
			pty.Close()
		}
		return errors.Join(ptyErr,
			os.WriteFile("/dev/null", []byte("x"), 0),
			os.WriteFile("/dev/shm/x", []byte("x"), 0o600),
			wantContent("/dev/fd/0", ""), // stdin is /dev/null
		)
	},
	"tmpfs is writable and $HOME is private": func(string) error {
		st, err := os.Stat(homeDir)
		if err == nil && st.Mode().Perm() != 0o700 {
			err = fmt.Errorf("%s has mode %v, want 0700", homeDir, st.Mode().Perm())
		}
		return errors.Join(err, os.WriteFile("/tmp/x", []byte("x"), 0o600))
	},
	"symlink and dir ops": func(string) error {
		text, err := os.Readlink("/bin")
		if err == nil && text != "usr/bin" {
			err = fmt.Errorf("/bin -> %q, want usr/bin", text)
		}
		st, serr := os.Stat("/work/empty")
		if serr == nil && !st.IsDir() {
			serr = errors.New("/work/empty is not a directory")
		}
		return errors.Join(err, serr)
	},
	"root is read-only and holds only the plan": func(f string) error {
		names, err := dirNames("/")
		if err != nil {
			return err
		}
		// The writable bind sits at the fixture's host path, under its first component.
		want := []string{"bin", "dev", "home", "proc", "ro", "tmp", "work", strings.Split(f, "/")[1]}
		slices.Sort(want)
		want = slices.Compact(want)
		var listErr error
		if !slices.Equal(names, want) {
			listErr = fmt.Errorf("/ holds %v, want %v", names, want)
		}
		// The host's tree is detached: no mount of it is left in this namespace.
		var hostErr error
		info, err := os.ReadFile("/proc/self/mountinfo")
		for line := range strings.Lines(string(info)) {
			if fields := strings.Fields(line); len(fields) > 4 && (strings.HasPrefix(fields[4], oldRoot) || strings.HasPrefix(fields[4], newRoot)) {
				hostErr = fmt.Errorf("mountinfo still has %s", line)
			}
		}
		return errors.Join(listErr, err, hostErr,
			wantErrno(os.Mkdir("/new", 0o755), unix.EROFS, "mkdir /new"),
			wantErrno(writeFile(f+"/ro/file"), unix.ENOENT, "the host's "+f+"/ro/file"),
		)
	},
}

// slashChecks run inside after TestSetupRootOnSlash's setup: the fixture's ro/ bound on /, a
// tmpfs on its sub/ and /dev/null on its file.
var slashChecks = map[string]func(fixture string) error{
	"/ is the read-only bind": func(string) error {
		return wantErrno(os.Mkdir("/new", 0o755), unix.EROFS, "mkdir /new")
	},
	"ops after it land on it": func(string) error {
		names, err := dirNames("/sub")
		if err == nil && len(names) != 0 {
			err = fmt.Errorf("/sub lists %v, want an empty tmpfs", names)
		}
		return errors.Join(err, writeFile("/sub/x"), wantContent("/file", ""))
	},
}

// dirNames lists the names in directory p, sorted.
func dirNames(p string) ([]string, error) {
	ents, err := os.ReadDir(p)
	names := make([]string, 0, len(ents))
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names, err
}

// writeFile opens p for writing, creating it, and writes to it.
func writeFile(p string) error {
	return os.WriteFile(p, []byte("x"), 0o644)
}

// wantErrno checks that err carries the errno want.
func wantErrno(err error, want syscall.Errno, what string) error {
	if !errors.Is(err, want) {
		return fmt.Errorf("%s: got %v, want %v", what, err, want)
	}
	return nil
}

// wantContent checks that file p holds exactly want.
func wantContent(p, want string) error {
	b, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	if string(b) != want {
		return fmt.Errorf("%s holds %q, want %q", p, b, want)
	}
	return nil
}
