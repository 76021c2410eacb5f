package setup

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/plan"
)

// What the command wrote to the sandbox's private tmpfs mounts (/tmp, the home, /dev/shm) goes
// with the sandbox: `touch ../x` from a project in the home lands in the throwaway home and
// vanishes without a word. With --explain or -v, the setup stays for the command's end and
// lists it before the sandbox is torn down.

const (
	leftoverBudget = 10000 // entries looked at, at most, over every mount: the walk stays short
	leftoversShown = 8     // entries named; the rest are counted
)

// leftover is one entry the command created at the top of a private tmpfs mount, and the files
// (anything but a directory) it holds.
type leftover struct {
	path  string
	files int
	bytes int64
	first string // the first file found, named when it is the only one
}

// findLeftovers lists, for each private tmpfs mount of the plan, the entries at its top that
// hold a file, without crossing into the mounts beneath it (the working directory's bind, say).
// complete is false when the budget ran out first.
func findLeftovers(mounts []plan.Mount) (found []leftover, complete bool) {
	budget := leftoverBudget
	roots := []string{"/dev/shm"}
	for _, m := range mounts {
		if m.Kind == plan.MountTmpfs {
			roots = append(roots, m.Target)
		}
	}
	for _, root := range roots {
		dev, ok := device(root)
		if !ok {
			continue
		}
		entries, _ := os.ReadDir(root) // an unreadable mount holds nothing to list
		for _, e := range entries {
			l := leftover{path: filepath.Join(root, e.Name())}
			filepath.WalkDir(l.path, func(path string, d fs.DirEntry, err error) error {
				if budget--; budget < 0 {
					return filepath.SkipAll
				}
				if err != nil {
					return nil
				}
				// A mount point (the working directory's bind, a file granted in the home)
				// is not the tmpfs's: neither it nor what is beneath it goes with the sandbox.
				info, err := d.Info()
				if err != nil {
					return nil
				}
				if st, ok := info.Sys().(*syscall.Stat_t); !ok || st.Dev != dev {
					if d.IsDir() {
						return filepath.SkipDir
					}
					return nil
				}
				if !d.IsDir() {
					if l.files++; l.files == 1 {
						l.first = path
					}
					l.bytes += info.Size()
				}
				return nil
			})
			if l.files > 0 {
				found = append(found, l)
			}
		}
	}
	return found, budget >= 0
}

// device is the device path lies on, without following a final symlink.
func device(path string) (uint64, bool) {
	var st unix.Stat_t
	if unix.Lstat(path, &st) != nil {
		return 0, false
	}
	return st.Dev, true
}

// describeLeftovers is the line that lists them, "" for none.
func describeLeftovers(found []leftover, complete bool) string {
	if len(found) == 0 {
		return ""
	}
	var names []string
	for i, l := range found {
		if i == leftoversShown {
			names = append(names, fmt.Sprintf("and %d more", len(found)-i))
			break
		}
		if l.files == 1 {
			names = append(names, fmt.Sprintf("%s (%s)", l.first, size(l.bytes)))
		} else {
			names = append(names, fmt.Sprintf("%s (%d files, %s)", l.path, l.files, size(l.bytes)))
		}
	}
	more := ""
	if !complete {
		more = "; more not counted"
	}
	return "gone with the sandbox, written to its private tmpfs mounts and not to the host: " + strings.Join(names, ", ") + more
}

// size is n bytes, rounded, in B, kB or MB.
func size(n int64) string {
	switch {
	case n < 1000:
		return fmt.Sprintf("%d B", n)
	case n < 1000*1000:
		return fmt.Sprintf("%.1f kB", float64(n)/1e3)
	}
	return fmt.Sprintf("%.1f MB", float64(n)/1e6)
}

// tellLeftovers lists, on stderr, what the command wrote that goes with the sandbox: a -v line
// when -v is on, else a line of jail's.
func (s *setup) tellLeftovers() {
	line := describeLeftovers(findLeftovers(s.spec.Mounts))
	switch {
	case line == "":
	case s.log.On():
		s.log.Printf("%s", line)
	default:
		fmt.Fprintf(os.Stderr, "jail: %s\n", line)
	}
}
