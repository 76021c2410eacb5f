// Package hooks plugs jail into agent harnesses. Each adapter reads the harness's pre-tool event
// (JSON on stdin) and, for a shell tool, answers in the harness's own envelope with the command
// rewritten to run under jail. The harness-specific JSON lives here so the CLI only dispatches.
package hooks

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
)

// harness describes one agent harness's pre-tool hook protocol.
type harness struct {
	event string // the pre-tool event's hook_event_name
	tool  string // the name of its shell tool
	shell string // the shell it would have run the command with
	// answer builds the envelope that replaces the tool input with input (the whole original
	// input, command rewritten); reason names the profile.
	answer func(input map[string]json.RawMessage, reason string) any
}

var harnesses = map[string]harness{
	// Claude Code runs Bash tool commands with the user's bash (or zsh, which reads the
	// rewritten line the same way); updatedInput replaces the whole input.
	"claude-code": {event: "PreToolUse", tool: "Bash", shell: "bash", answer: preToolUseAnswer},
	// Codex speaks the same PreToolUse envelope; it applies updatedInput only together with
	// permissionDecision "allow" and reports its shell tool as "Bash".
	"codex": {event: "PreToolUse", tool: "Bash", shell: "bash", answer: preToolUseAnswer},
	// Gemini CLI runs run_shell_command with bash -c on Linux and merges
	// hookSpecificOutput.tool_input over the model's arguments.
	"gemini": {event: "BeforeTool", tool: "run_shell_command", shell: "bash", answer: beforeToolAnswer},
}

// Harnesses lists the harness names Run accepts, sorted.
func Harnesses() []string {
	names := make([]string, 0, len(harnesses))
	for name := range harnesses {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// maxEvent bounds how much stdin is read: a pre-tool event is a few kilobytes; anything beyond
// this is not one.
const maxEvent = 16 << 20

// Run answers one pre-tool event from harness, read from in, for the CLI's `jail hook HARNESS`.
// jailPath is the absolute path of the jail binary (os.Executable) written into the rewritten
// command; profile "" means DefaultProfile.
//
// It returns the process exit status:
//   - shell tool: the rewrite envelope on out, 0;
//   - any other tool or event: nothing, 0 (the harness goes on as if there were no hook);
//   - malformed event: a message on errw, nothing on out, 0 — the harness's "no decision", which
//     never allows anything by itself;
//   - unknown harness or unusable jail path (a configuration error): a message on errw, 2, which
//     every supported harness treats as "block this tool call", so a broken setup fails closed.
func Run(harnessName, profile, jailPath string, in io.Reader, out, errw io.Writer) int {
	h, ok := harnesses[harnessName]
	if !ok {
		fmt.Fprintf(errw, "jail hook: unknown harness %q (known: %q)\n", harnessName, Harnesses())
		return 2
	}
	if profile == "" {
		profile = DefaultProfile
	}
	// A bad jail path or profile is a setup error, not a bad event: check it before reading.
	if _, err := Command(jailPath, profile, h.shell, ""); err != nil {
		fmt.Fprintf(errw, "jail hook %s: %v\n", harnessName, err)
		return 2
	}
	data, err := io.ReadAll(io.LimitReader(in, maxEvent+1))
	if err == nil && len(data) > maxEvent {
		err = fmt.Errorf("event larger than %d bytes", maxEvent)
	}
	var answer any
	if err == nil {
		answer, err = h.rewrite(data, profile, jailPath)
	}
	if err != nil {
		fmt.Fprintf(errw, "jail hook %s: malformed event, no decision made: %v\n", harnessName, err)
		return 0
	}
	if answer == nil {
		return 0
	}
	data, err = marshal(answer)
	if err != nil {
		fmt.Fprintf(errw, "jail hook %s: encode answer, no decision made: %v\n", harnessName, err)
		return 0
	}
	if _, err := out.Write(append(data, '\n')); err != nil {
		fmt.Fprintf(errw, "jail hook %s: write answer: %v\n", harnessName, err)
		return 2
	}
	return 0
}

// rewrite returns the envelope for one event, nil when the event is not for this hook (another
// event or tool), or an error when the event is malformed.
func (h harness) rewrite(data []byte, profile, jailPath string) (any, error) {
	var event map[string]json.RawMessage
	if err := decodeObject(data, &event); err != nil {
		return nil, fmt.Errorf("event: %w", err)
	}
	if raw, ok := event["hook_event_name"]; ok {
		name, err := decodeString(raw)
		if err != nil {
			return nil, fmt.Errorf("hook_event_name: %w", err)
		}
		if name != h.event {
			return nil, nil
		}
	}
	tool, err := decodeString(event["tool_name"])
	if err != nil {
		return nil, fmt.Errorf("tool_name: %w", err)
	}
	if tool != h.tool {
		return nil, nil
	}
	var input map[string]json.RawMessage
	if err := decodeObject(event["tool_input"], &input); err != nil {
		return nil, fmt.Errorf("tool_input: %w", err)
	}
	command, err := decodeString(input["command"])
	if err != nil {
		return nil, fmt.Errorf("tool_input.command: %w", err)
	}
	wrapped, err := Command(jailPath, profile, h.shell, command)
	if err != nil {
		return nil, fmt.Errorf("rewrite: %w", err)
	}
	updated := make(map[string]json.RawMessage, len(input))
	for k, v := range input {
		updated[k] = v
	}
	if updated["command"], err = marshal(wrapped); err != nil {
		return nil, fmt.Errorf("encode command: %w", err)
	}
	return h.answer(updated, fmt.Sprintf("jail: runs sandboxed under profile %q", profile)), nil
}

// marshal is json.Marshal without HTML escaping, so && and <<EOF stay readable in the harness's
// transcript; the JSON means the same either way.
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// decodeString decodes data, which must hold one JSON string (not null).
func decodeString(data []byte) (string, error) {
	var s *string
	if data == nil {
		return "", errors.New("missing")
	}
	if err := json.Unmarshal(data, &s); err != nil {
		return "", err
	}
	if s == nil {
		return "", errors.New("null, want a string")
	}
	return *s, nil
}

// decodeObject decodes data, which must hold one JSON object, into v.
func decodeObject(data []byte, v *map[string]json.RawMessage) error {
	if data == nil {
		return errors.New("missing")
	}
	if err := json.Unmarshal(data, v); err != nil {
		return err
	}
	if *v == nil {
		return errors.New("null, want an object")
	}
	return nil
}

// preToolUseAnswer is the Claude Code and Codex PreToolUse envelope: allow, paired with the
// replacement input (both harnesses ignore updatedInput without an allow).
func preToolUseAnswer(input map[string]json.RawMessage, reason string) any {
	return map[string]any{"hookSpecificOutput": map[string]any{
		"hookEventName":            "PreToolUse",
		"permissionDecision":       "allow",
		"permissionDecisionReason": reason,
		"updatedInput":             input,
	}}
}

// beforeToolAnswer is the Gemini CLI BeforeTool envelope. Gemini merges tool_input over the
// model's arguments (some versions rebuild the tool from it alone), so the whole input is sent.
func beforeToolAnswer(input map[string]json.RawMessage, reason string) any {
	return map[string]any{
		"decision": "allow",
		"reason":   reason,
		"hookSpecificOutput": map[string]any{
			"hookEventName": "BeforeTool",
			"tool_input":    input,
		},
	}
}
