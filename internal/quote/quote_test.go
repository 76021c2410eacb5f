package quote

import "testing"

func TestWord(t *testing.T) {
	for in, want := range map[string]string{
		"/etc/passwd":                "/etc/passwd",
		"registry.npmjs.org":         "registry.npmjs.org",
		"my file":                    `"my file"`,
		"x\x1b]0;pwned\x07\njail: y": `"x\x1b]0;pwned\a\njail: y"`,
		"\u009b2J":                   `"\u009b2J"`, // a C1 control: CSI on some terminals
		"bad\xffutf8":                `"bad\xffutf8"`,
		"é.example":                  "é.example",
	} {
		if got := Word(in); got != want {
			t.Errorf("Word(%q) = %s, want %s", in, got, want)
		}
	}
}
