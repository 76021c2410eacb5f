package fakemodel

import (
	"encoding/json"

	"github.com/jail-sandbox/jail/internal/http1"
)

// The Anthropic Messages API, as Claude Code calls it (ANTHROPIC_BASE_URL): POST /v1/messages,
// streamed as server-sent events when "stream" is true.

type anthropicRequest struct {
	Stream   bool `json:"stream"`
	Messages []struct {
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Name string `json:"name"`
	} `json:"tools"`
}

func (s *Server) anthropic(w *http1.Response, r *http1.Request) {
	var req anthropicRequest
	if err := readJSON(r, &req); err != nil {
		writeError(w, 400, err)
		return
	}
	var offered []string
	for _, t := range req.Tools {
		offered = append(offered, t.Name)
	}
	var result *string
	for _, m := range req.Messages {
		var blocks []struct {
			Type      string          `json:"type"`
			ToolUseID string          `json:"tool_use_id"`
			Content   json.RawMessage `json:"content"`
		}
		if json.Unmarshal(m.Content, &blocks) != nil {
			continue
		}
		for _, b := range blocks {
			if b.Type == "tool_result" && b.ToolUseID == callID {
				text := textOf(b.Content)
				result = &text
			}
		}
	}
	var block map[string]any
	stop := "end_turn"
	if tool := s.turn(result, offered, "Bash"); tool != "" {
		block = map[string]any{"type": "tool_use", "id": callID, "name": tool,
			"input": map[string]any{"command": s.command, "description": "jail hook check"}}
		stop = "tool_use"
	} else {
		text := doneText
		if result == nil {
			text = "ok"
		}
		block = map[string]any{"type": "text", "text": text}
	}
	message := map[string]any{"id": "msg_jail_check", "type": "message", "role": "assistant",
		"model": "jail-check", "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": 1, "output_tokens": 1}}
	if !req.Stream {
		message["content"] = []any{block}
		message["stop_reason"] = stop
		writeJSON(w, message)
		return
	}
	message["content"] = []any{}
	message["stop_reason"] = nil
	startSSE(w)
	events := []event{{"message_start", map[string]any{"message": message}}}
	if block["type"] == "tool_use" {
		input, _ := json.Marshal(block["input"])
		start := map[string]any{"type": "tool_use", "id": callID, "name": block["name"], "input": map[string]any{}}
		events = append(events,
			event{"content_block_start", map[string]any{"index": 0, "content_block": start}},
			event{"content_block_delta", map[string]any{"index": 0, "delta": map[string]any{"type": "input_json_delta", "partial_json": string(input)}}})
	} else {
		events = append(events,
			event{"content_block_start", map[string]any{"index": 0, "content_block": map[string]any{"type": "text", "text": ""}}},
			event{"content_block_delta", map[string]any{"index": 0, "delta": map[string]any{"type": "text_delta", "text": block["text"]}}})
	}
	events = append(events,
		event{"content_block_stop", map[string]any{"index": 0}},
		event{"message_delta", map[string]any{"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": 1}}},
		event{"message_stop", map[string]any{}})
	for _, e := range events {
		e.data["type"] = e.name
		if sse(w, e.name, e.data) != nil {
			return
		}
	}
}
