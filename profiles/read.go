package profiles

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// MaxProfileSize bounds a profile. Real profiles are a few kilobytes; the bound keeps a mistaken
// or hostile path (/dev/zero, a multi-gigabyte file, a pipe that never ends) from growing jail.
const MaxProfileSize = 1 << 20

// readProfile reads a profile: a regular file, or a FIFO or pipe (`-p <(generate)`), through
// symlinks, of at most MaxProfileSize bytes. A device, directory or socket is refused before it
// is opened, so opening it has no side effect; at most one byte past the bound is read, so a file
// that grows after the check, or a stream that never ends, is refused too.
func readProfile(path string) ([]byte, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if err := profileKind(info.Mode()); err != nil {
		return nil, err
	}
	flags := os.O_RDONLY | syscall.O_NOCTTY
	if info.Mode().IsRegular() {
		flags |= syscall.O_NONBLOCK // replaced by a FIFO since the Stat: do not wait for a writer
	}
	f, err := os.OpenFile(path, flags, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if info, err = f.Stat(); err != nil {
		return nil, err
	}
	if err := profileKind(info.Mode()); err != nil {
		return nil, err
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxProfileSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxProfileSize {
		return nil, fmt.Errorf("larger than %d bytes, too large for a profile", MaxProfileSize)
	}
	return data, nil
}

// profileKind accepts the file types a profile may be read from: regular files and FIFOs.
func profileKind(mode fs.FileMode) error {
	kind := ""
	switch {
	case mode.IsRegular() || mode&fs.ModeNamedPipe != 0:
		return nil
	case mode.IsDir():
		kind = "a directory"
	case mode&fs.ModeCharDevice != 0:
		kind = "a character device"
	case mode&fs.ModeDevice != 0:
		kind = "a block device"
	case mode&fs.ModeSocket != 0:
		kind = "a socket"
	default:
		kind = "a special file"
	}
	return fmt.Errorf("%s, not a regular file or a pipe", kind)
}
