package hooks

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os/exec"
	"strings"
	"testing"
)

func TestQuoteExact(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", "''"},
		{"agent", "agent"},
		{"/usr/local/bin/jail", "/usr/local/bin/jail"},
		{"a b", "'a b'"},
		{"it's", `'it'\''s'`},
		{"'", `''\'''`},
		{"=ls", "'=ls'"},
		{"~", "'~'"},
		{"$HOME", "'$HOME'"},
		{"a\nb", "'a\nb'"},
	} {
		got, err := Quote(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("Quote(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

func TestQuoteRejectsNUL(t *testing.T) {
	for _, s := range []string{"\x00", "a\x00b", "echo hi\x00; rm -rf /"} {
		if _, err := Quote(s); !errors.Is(err, ErrNUL) {
			t.Errorf("Quote(%q) error = %v; want ErrNUL", s, err)
		}
	}
}

// trickyRunes are the characters most likely to break a quoting function: every quote, every
// expansion and glob character, whitespace and control bytes, multi-byte UTF-8, a line separator
// that JSON and JavaScript treat specially, and bytes that are not UTF-8 at all.
var trickyRunes = []string{
	"'", `"`, "`", "$", `\`, "!", "\n", "\r", "\t", " ", "*", "?", "[", "]", "{", "}", "~", "#",
	";", "&", "|", "<", ">", "(", ")", "=", "%", "^", "-", "a", "Z", "0", "é", "漢", "🙂", "\u2028",
	"\x01", "\x1b", "\x7f", "\xff", "\xc3", "'\\''", "$(", "${", "<<EOF",
}

func randomText(r *rand.Rand) string {
	var b strings.Builder
	for n := r.IntN(24); n > 0; n-- {
		b.WriteString(trickyRunes[r.IntN(len(trickyRunes))])
	}
	return b.String()
}

// roundTrip has shell print each quoted word followed by a NUL (which no word can contain) and
// returns the words the shell saw.
func roundTrip(t *testing.T, shell string, words []string, env ...string) []string {
	t.Helper()
	var script strings.Builder
	script.WriteString(`printf '%s\0'`)
	for _, w := range words {
		q, err := Quote(w)
		if err != nil {
			t.Fatalf("Quote(%q): %v", w, err)
		}
		script.WriteString(" " + q)
	}
	cmd := exec.Command(shell, "-c", script.String())
	cmd.Env = env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s -c: %v: %s", shell, err, stderr.String())
	}
	got := strings.Split(string(out), "\x00")
	return got[:len(got)-1]
}

// TestQuoteRoundTrip is the property test: for random tricky strings, the shell reads back
// exactly the original bytes, under bash and POSIX sh (and zsh, the other shell Claude Code runs
// commands with, where installed), in a UTF-8 and in the C locale.
func TestQuoteRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	words := []string{"", "'", "''", `'\''`, "a\n\nb\n", "--", "-c", "=ls", "~root", "a=b"}
	for range 2000 {
		words = append(words, randomText(r))
	}
	shells := []string{"bash", "sh"}
	if _, err := exec.LookPath("zsh"); err == nil {
		shells = append(shells, "zsh")
	} else {
		t.Log("zsh not installed: round trip checked under bash and sh only")
	}
	for _, shell := range shells {
		for _, locale := range []string{"LC_ALL=C.UTF-8", "LC_ALL=C"} {
			got := roundTrip(t, shell, words, locale)
			if len(got) != len(words) {
				t.Fatalf("%s %s: got %d words back, want %d", shell, locale, len(got), len(words))
			}
			for i := range words {
				if got[i] != words[i] {
					t.Errorf("%s %s: %q came back as %q", shell, locale, words[i], got[i])
				}
			}
		}
	}
}

// FuzzQuote checks the round trip through bash for any input; NULs must be refused, never
// dropped. Run with: go test -fuzz FuzzQuote ./hooks/
func FuzzQuote(f *testing.F) {
	for _, s := range []string{"", "'", "a b", "it's", "$(id)", "\xff\n'\"`"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q, err := Quote(s)
		if strings.IndexByte(s, 0) >= 0 {
			if !errors.Is(err, ErrNUL) {
				t.Fatalf("Quote(%q) = %q, %v; want ErrNUL", s, q, err)
			}
			return
		}
		out, err := exec.Command("bash", "-c", "printf %s "+q).Output()
		if err != nil {
			t.Fatalf("bash -c %q: %v", "printf %s "+q, err)
		}
		if string(out) != s {
			t.Fatalf("%q came back as %q", s, out)
		}
	})
}
