package fakemodel

import (
	"encoding/json"

	"github.com/jail-sandbox/jail/internal/http1"
)

// The OpenAI Responses API, as Codex calls it through a model provider whose base_url points
// here and whose wire_api is "responses": POST /v1/responses, streamed as server-sent events.

type openaiRequest struct {
	Stream bool              `json:"stream"`
	Input  []json.RawMessage `json:"input"`
	Tools  []struct {
		Type string `json:"type"`
		Name string `json:"name"`
	} `json:"tools"`
}

// openaiShellArgs are the arguments of each shell tool Codex has offered, by tool name.
var openaiShellArgs = map[string]func(command string) any{
	"exec_command":  func(c string) any { return map[string]any{"cmd": c} },
	"shell_command": func(c string) any { return map[string]any{"command": c} },
	"shell":         func(c string) any { return map[string]any{"command": []string{"bash", "-lc", c}} },
}

func (s *Server) openai(w *http1.Response, r *http1.Request) {
	var req openaiRequest
	if err := readJSON(r, &req); err != nil {
		writeError(w, 400, err)
		return
	}
	var offered []string
	for _, t := range req.Tools {
		if t.Name != "" {
			offered = append(offered, t.Name)
		} else {
			offered = append(offered, t.Type)
		}
	}
	var result *string
	for _, raw := range req.Input {
		var item struct {
			Type   string          `json:"type"`
			CallID string          `json:"call_id"`
			Output json.RawMessage `json:"output"`
		}
		if json.Unmarshal(raw, &item) == nil && item.Type == "function_call_output" && item.CallID == callID {
			text := textOf(item.Output)
			result = &text
		}
	}
	var item map[string]any
	if tool := s.turn(result, offered, "shell_command", "exec_command", "shell"); tool != "" {
		args, _ := json.Marshal(openaiShellArgs[tool](s.command))
		item = map[string]any{"type": "function_call", "id": "fc_jail_check", "call_id": callID,
			"name": tool, "arguments": string(args), "status": "completed"}
	} else {
		text := doneText
		if result == nil {
			text = "ok"
		}
		item = map[string]any{"type": "message", "id": "msg_jail_check", "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": text, "annotations": []any{}}}}
	}
	response := map[string]any{"id": "resp_jail_check", "object": "response", "model": "jail-check",
		"status": "completed", "output": []any{item},
		"usage": map[string]any{"input_tokens": 1, "output_tokens": 1, "total_tokens": 2,
			"input_tokens_details": map[string]any{"cached_tokens": 0}, "output_tokens_details": map[string]any{"reasoning_tokens": 0}}}
	if !req.Stream {
		writeJSON(w, response)
		return
	}
	startSSE(w)
	for _, e := range []event{
		{"response.created", map[string]any{"response": map[string]any{"id": "resp_jail_check", "status": "in_progress", "output": []any{}}}},
		{"response.output_item.added", map[string]any{"output_index": 0, "item": item}},
		{"response.output_item.done", map[string]any{"output_index": 0, "item": item}},
		{"response.completed", map[string]any{"response": response}},
	} {
		e.data["type"] = e.name
		if sse(w, e.name, e.data) != nil {
			return
		}
	}
}
