package profiles

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// pathLists are the keys whose values are paths (and so take variables and a trailing ?).
var pathLists = []string{
	"filesystem.read", "filesystem.write", "filesystem.hide", "filesystem.protect", "filesystem.tmpfs",
	"landlock.read", "landlock.write",
}

// errUnset marks a path using a variable that is known but has no value on this host.
var errUnset = errors.New("unset variable")

// Expand returns p with the variables in its paths and in process.cwd replaced by the host's
// values. A path that uses an unset variable is dropped when optional (trailing ?) and an error
// otherwise; an unknown variable is always an error. Optional paths keep their ?: whether they
// exist is decided by Resolve. The result is what `jail profile show` prints. On error it is
// returned too, without the paths in error, so that the rest can be checked.
func Expand(p *Profile, host Host) (*Profile, error) {
	repo, _ := host.repository(newResolver())
	return expand(p, host.variables(repo))
}

// expand is Expand with the variables' values.
func expand(p *Profile, vars map[string]string) (*Profile, error) {
	room := 0 // an origin for each path expanded
	for _, l := range p.stringLists() {
		if slices.Contains(pathLists, l.key) {
			room += len(*l.list)
		}
	}
	out := p.clone(room)
	var errs ErrorList
	for _, l := range out.stringLists() {
		if !slices.Contains(pathLists, l.key) {
			continue
		}
		var expanded []string
		for _, raw := range *l.list {
			v, err := expandPath(raw, vars)
			if errors.Is(err, errUnset) && strings.HasSuffix(raw, "?") {
				continue
			}
			if err != nil {
				errs = append(errs, p.errorAt(l.key, raw, "%s: %w", raw, err))
				continue
			}
			if !slices.Contains(expanded, v) {
				expanded = append(expanded, v)
				out.setOrigin(l.key, v, p.origin(l.key, raw))
			}
		}
		*l.list = expanded
	}
	if raw := p.Process.Cwd; raw != "" {
		v, err := expandPath(raw, vars)
		if err != nil {
			errs = append(errs, p.errorAt("process.cwd", raw, "%s: %w", raw, err))
		}
		out.Process.Cwd = v
		out.setOrigin("process.cwd", v, p.origin("process.cwd", raw))
	}
	return out, errs.err()
}

// expandPath replaces a leading ~ and every $NAME or ${NAME} in s with its value.
func expandPath(s string, vars map[string]string) (string, error) {
	if s == "~" || strings.HasPrefix(s, "~/") || strings.HasPrefix(s, "~?") {
		s = "$HOME" + s[1:]
	}
	return substitute(s, func(name string) (string, error) {
		value, known := vars[name]
		switch {
		case !known:
			return "", fmt.Errorf("unknown variable $%s (known: $%s)", name,
				strings.Join(slices.Sorted(maps.Keys(vars)), ", $"))
		case value == "":
			return "", fmt.Errorf("%w $%s (mark the path optional with a trailing ?)", errUnset, name)
		}
		return value, nil
	})
}

// uses reports whether the path s refers to the variable name.
func uses(s, name string) bool {
	found := false
	substitute(s, func(n string) (string, error) {
		found = found || n == name
		return "", nil
	})
	return found
}

// substitute replaces every $NAME or ${NAME} in s with what value returns for NAME.
func substitute(s string, value func(name string) (string, error)) (string, error) {
	var b strings.Builder
	for {
		i := strings.IndexByte(s, '$')
		if i < 0 {
			b.WriteString(s)
			return b.String(), nil
		}
		b.WriteString(s[:i])
		name, rest, err := variableName(s[i+1:])
		if err != nil {
			return "", err
		}
		v, err := value(name)
		if err != nil {
			return "", err
		}
		b.WriteString(v)
		s = rest
	}
}

// variableName splits "NAME..." or "{NAME}..." after a $ into the name and the rest.
func variableName(s string) (name, rest string, err error) {
	if inner, ok := strings.CutPrefix(s, "{"); ok {
		end := strings.IndexByte(inner, '}')
		if end < 0 || !isName(inner[:end]) {
			return "", "", errors.New("bad variable reference: want $NAME or ${NAME}")
		}
		return inner[:end], inner[end+1:], nil
	}
	end := 0
	for end < len(s) && isNameByte(s[end], end) {
		end++
	}
	if end == 0 {
		return "", "", errors.New("bad variable reference: want $NAME or ${NAME}")
	}
	return s[:end], s[end:], nil
}

// isName reports whether s is a shell-style variable name.
func isName(s string) bool {
	for i := range len(s) {
		if !isNameByte(s[i], i) {
			return false
		}
	}
	return s != ""
}

// isNameByte reports whether c may appear at position i of a variable name.
func isNameByte(c byte, i int) bool {
	return c == '_' || 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || i > 0 && '0' <= c && c <= '9'
}
