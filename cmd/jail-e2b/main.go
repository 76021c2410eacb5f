// Command jail-e2b serves an E2B-compatible endpoint on loopback for jail's persistent
// sandboxes (package jail/e2b). `jail serve --e2b ADDR` runs it; it is a program of its own so
// that jail's binary, which starts twice for every sandbox, does not carry net/http, Connect and
// protobuf and their start-up.
//
//	jail-e2b --jail PATH [--template NAME=PROFILE]... [--dir DIR] ADDR
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/jail-sandbox/jail/jail/client"
	"github.com/jail-sandbox/jail/jail/e2b"
)

// exitFailure is jail's own failure status.
const exitFailure = 125

const usage = `Usage: jail serve --e2b ADDR [--e2b-template NAME=PROFILE]... [--e2b-dir DIR]
       (jail-e2b --jail PATH [--template NAME=PROFILE]... [--dir DIR] ADDR)

Serves E2B's API for jail's sandboxes on ADDR (127.0.0.1:PORT, [::1]:PORT or localhost:PORT;
port 0 picks one) until killed. Writes the environment an E2B client needs (E2B_API_URL,
E2B_SANDBOX_URL, E2B_API_KEY) to DIR/env and prints it. docs/e2b.md tells the rest.
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("jail-e2b", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	jailBin := fs.String("jail", "", "")
	dir := fs.String("dir", "", "")
	templates := e2b.DefaultTemplates()
	fs.Func("template", "", func(v string) error {
		name, profile, ok := strings.Cut(v, "=")
		if !ok || name == "" || profile == "" {
			return fmt.Errorf("template %q: want NAME=PROFILE", v)
		}
		templates[name] = profile
		return nil
	})
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, usage)
			return 0
		}
		return fail(stderr, fmt.Errorf("serve --e2b: %w\n%s", err, usage))
	}
	if fs.NArg() != 1 {
		return fail(stderr, fmt.Errorf("serve --e2b: give one address to listen on (127.0.0.1:PORT)\n%s", usage))
	}
	addr := fs.Arg(0)
	if err := e2b.CheckLoopback(addr); err != nil {
		return fail(stderr, err)
	}
	if *dir == "" {
		*dir = defaultDir()
	}
	if err := os.MkdirAll(*dir, 0o700); err != nil {
		return fail(stderr, fmt.Errorf("serve --e2b: %w", err))
	}
	key, err := e2b.LoadKey(filepath.Join(*dir, "api-key"))
	if err != nil {
		return fail(stderr, fmt.Errorf("serve --e2b: %w", err))
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fail(stderr, fmt.Errorf("serve --e2b: %w", err))
	}
	env := e2b.Environment("http://"+ln.Addr().String(), key)
	envFile := filepath.Join(*dir, "env")
	if err := writeFile(envFile, env); err != nil {
		ln.Close()
		return fail(stderr, fmt.Errorf("serve --e2b: %w", err))
	}
	srv := &e2b.Server{Client: &client.Client{Binary: *jailBin}, Key: key, Templates: templates, Dir: *dir}
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		hs.Close()
	}()
	fmt.Fprintf(stderr, "jail: serving E2B's API on http://%s; its environment is in %s:\n", ln.Addr(), envFile)
	fmt.Fprint(stdout, env)
	if f, ok := stdout.(*os.File); ok {
		f.Sync()
	}
	if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fail(stderr, fmt.Errorf("serve --e2b: %w", err))
	}
	return 0
}

// defaultDir is the endpoint's directory: $XDG_STATE_HOME/jail/e2b, else ~/.local/state/jail/e2b.
func defaultDir() string {
	state := os.Getenv("XDG_STATE_HOME")
	if state == "" {
		home, _ := os.UserHomeDir()
		state = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(state, "jail", "e2b")
}

// writeFile replaces file with content, mode 0600: it holds the key.
func writeFile(file, content string) error {
	tmp := file + ".new"
	if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, file)
}

func fail(w io.Writer, err error) int {
	fmt.Fprintf(w, "jail: %s\n", strings.TrimPrefix(err.Error(), "jail: "))
	return exitFailure
}
