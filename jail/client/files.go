package client

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"github.com/jail-sandbox/jail/api"
	"github.com/jail-sandbox/jail/jail/internal/archive"
	"github.com/jail-sandbox/jail/jail/internal/fsop"
)

// Every file operation runs inside the sandbox: jail's binary as fsop.Arg0, started by the
// spawner as any command is (package fsop), with pipes for what goes in and comes out.

// fileOp runs a file operation in sandbox idOrName with stdin (nil: none) and writes what it
// answers to stdout.
func fileOp(idOrName string, args []string, stdin io.Reader, stdout io.Writer) error {
	id, dir, err := live(idOrName)
	if err != nil {
		return err
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return api.Errorf(api.Internal, "pipe: %s", err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		closeFiles([]*os.File{inR, inW})
		return api.Errorf(api.Internal, "pipe: %s", err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		closeFiles([]*os.File{inR, inW, outR, outW})
		return api.Errorf(api.Internal, "pipe: %s", err)
	}
	defer closeFiles([]*os.File{inR, inW, outR, outW, errR, errW})
	run, err := start(id, dir, Command{Argv: append([]string{fsop.Arg0}, args...), helper: true, Foreground: true,
		Stdin: inR, Stdout: outW, Stderr: errW, Timeout: -1})
	if err != nil {
		return err
	}
	defer run.Close()
	closeFiles([]*os.File{inR, outW, errW}) // the helper has them
	go func() {
		if stdin != nil {
			io.Copy(inW, stdin)
		}
		inW.Close()
	}()
	var errOut bytes.Buffer
	copied := make(chan error, 1)
	go func() {
		_, err := io.Copy(stdout, outR)
		io.Copy(io.Discard, outR) // a writer that failed: the helper must not block on its pipe
		copied <- err
	}()
	io.Copy(&errOut, io.LimitReader(errR, 64<<10))
	cerr := <-copied
	exit, err := run.Wait()
	if err != nil {
		return err
	}
	if exit.ExitCode != 0 {
		var e api.Error
		if json.Unmarshal(errOut.Bytes(), &e) == nil && e.Code != "" {
			return &e
		}
		return api.Errorf(api.Internal, "sandbox %s: file operation %s: exit status %d: %s", id, args[0], exit.ExitCode, bytes.TrimSpace(errOut.Bytes()))
	}
	if cerr != nil {
		return api.Errorf(api.Internal, "sandbox %s: file operation %s: %s", id, args[0], cerr)
	}
	return nil
}

// fileJSON runs a file operation whose answer is JSON, into v.
func fileJSON(idOrName string, args []string, stdin io.Reader, v any) error {
	var out bytes.Buffer
	if err := fileOp(idOrName, args, stdin, &out); err != nil {
		return err
	}
	if err := json.Unmarshal(out.Bytes(), v); err != nil {
		return api.Errorf(api.Internal, "file operation %s: its answer: %s", args[0], err)
	}
	return nil
}

func bit(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// ReadFile writes the bytes of file path, from offset, length of them (<0: to the end), to w.
func (c *Client) ReadFile(idOrName, path string, offset, length int64, w io.Writer) error {
	return fileOp(idOrName, []string{fsop.Read, path, strconv.FormatInt(offset, 10), strconv.FormatInt(length, 10)}, nil, w)
}

// WriteFile replaces file path's content with what r holds, creating it (with mode, "" for
// 0644) and its parents when missing.
func (c *Client) WriteFile(idOrName, path, mode string, r io.Reader) (*api.WriteFileResponse, error) {
	out := &api.WriteFileResponse{}
	return out, fileJSON(idOrName, []string{fsop.Write, path, mode}, r, out)
}

// Stat describes path (a symlink itself).
func (c *Client) Stat(idOrName, path string) (*api.FileEntry, error) {
	out := &api.FileEntry{}
	return out, fileJSON(idOrName, []string{fsop.Stat, path}, nil, out)
}

// ListFiles lists directory path, depth levels deep.
func (c *Client) ListFiles(idOrName, path string, depth int) (*api.FileList, error) {
	out := &api.FileList{}
	return out, fileJSON(idOrName, []string{fsop.List, path, strconv.Itoa(depth)}, nil, out)
}

// Mkdir makes directory req.Path (and its parents with req.Parents).
func (c *Client) Mkdir(idOrName string, req api.MkdirRequest) (*api.FileEntry, error) {
	out := &api.FileEntry{}
	return out, fileJSON(idOrName, []string{fsop.Mkdir, req.Path, bit(req.Parents), req.Mode}, nil, out)
}

// Move renames req.From to req.To.
func (c *Client) Move(idOrName string, req api.MoveRequest) (*api.FileEntry, error) {
	out := &api.FileEntry{}
	return out, fileJSON(idOrName, []string{fsop.Move, req.From, req.To}, nil, out)
}

// Remove removes req.Path (a directory's tree with req.Recursive).
func (c *Client) Remove(idOrName string, req api.RemoveRequest) error {
	return fileOp(idOrName, []string{fsop.Remove, req.Path, bit(req.Recursive), bit(req.MissingOK)}, nil, io.Discard)
}

// ArchiveOut writes a tar stream of path (a directory's tree under its own name, or the file)
// to w.
func (c *Client) ArchiveOut(idOrName, path string, w io.Writer) error {
	return fileOp(idOrName, []string{fsop.ArchiveOut, path}, nil, w)
}

// ArchiveIn extracts the tar stream r into directory dir, created if missing; with as, the
// archive's top entry gets that name.
func (c *Client) ArchiveIn(idOrName, dir, as string, r io.Reader) (*api.ArchiveResult, error) {
	out := &api.ArchiveResult{}
	if as != "" && (as == "." || as == ".." || bytes.ContainsAny([]byte(as), "/\x00")) {
		return nil, api.Errorf(api.InvalidArgument, "copy as %q: a name, not a path", as)
	}
	return out, fileJSON(idOrName, []string{fsop.ArchiveIn, dir, as}, r, out)
}

// CopyOut copies path out of sandbox idOrName to dest on the host, as `jail cp ID:PATH DEST`
// does: into dest when it is a directory, else as dest. The archive comes from the sandbox and
// is extracted as hostile (package archive): nothing lands outside dest, no symlink is followed.
func (c *Client) CopyOut(idOrName, path, dest string) error {
	into, as := dest, ""
	if fi, err := os.Stat(dest); err != nil || !fi.IsDir() {
		into, as = filepath.Dir(dest), filepath.Base(dest)
	}
	r, w := io.Pipe()
	extracted := make(chan error, 1)
	go func() {
		_, err := archive.Extract(r, into, as)
		r.CloseWithError(err)
		extracted <- err
	}()
	err := c.ArchiveOut(idOrName, path, w)
	w.CloseWithError(err)
	if xerr := <-extracted; xerr != nil && err == nil {
		err = api.Errorf(api.InvalidArgument, "copy to %s: %s", dest, xerr)
	}
	return err
}

// CopyIn copies src from the host into sandbox idOrName at path, as `jail cp SRC ID:PATH`
// does: into path when it is a directory there, else as path.
func (c *Client) CopyIn(idOrName, src, path string) error {
	if _, err := os.Lstat(src); err != nil {
		return api.Errorf(api.NotFound, "copy %s: %s", src, unwrapOp(err))
	}
	into, as := path, ""
	if e, err := c.Stat(idOrName, path); err != nil || e.Type != "dir" {
		into, as = filepath.Dir(path), filepath.Base(path)
	}
	r, w := io.Pipe()
	go func() { w.CloseWithError(archive.Write(w, src)) }()
	_, err := c.ArchiveIn(idOrName, into, as, r)
	r.Close()
	return err
}
