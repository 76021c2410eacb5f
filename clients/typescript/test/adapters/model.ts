// A fake OpenAI-compatible model server on loopback for the frameworks' agent runs: each request
// gets the next turn of a script (a tool call or a final text), answered in the form the
// framework asked for — Chat Completions (JSON or a server-sent event stream) or the Responses
// API (JSON) — and every request is kept, so a test can check what the framework sent back.

import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export type Turn = { tool: string; args: Record<string, unknown> } | { text: string };

export interface Received {
  path: string;
  body: Record<string, any>;
}

export class FakeModel {
  readonly requests: Received[] = [];
  private readonly server: Server;

  private constructor(private readonly script: Turn[]) {
    this.server = createServer((req, res) => {
      void body(req).then((text) => {
        const json = text ? JSON.parse(text) : {};
        this.requests.push({ path: req.url ?? '', body: json });
        const turn = this.script[this.requests.length - 1] ?? { text: 'the script has ended' };
        const n = this.requests.length;
        if (req.url?.endsWith('/chat/completions')) {
          if (json.stream) {
            res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
            for (const chunk of chatChunks(turn, n)) res.write(`data: ${JSON.stringify(chunk)}\n\n`);
            res.end('data: [DONE]\n\n');
          } else {
            res.writeHead(200, { 'content-type': 'application/json' });
            res.end(JSON.stringify(chatCompletion(turn, n)));
          }
        } else if (req.url?.endsWith('/responses') && !json.stream) {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify(response(turn, n)));
        } else {
          res.writeHead(501, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ error: { message: `fake model: ${req.url} (stream: ${!!json.stream}) is not faked` } }));
        }
      });
    });
  }

  static async start(script: Turn[]): Promise<FakeModel> {
    const m = new FakeModel(script);
    await new Promise<void>((resolve) => m.server.listen(0, '127.0.0.1', resolve));
    return m;
  }

  /** The base URL an OpenAI client takes (`…/v1`). */
  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1`;
  }

  /** The tool results request i carried back (Chat Completions' tool messages, Responses' function_call_output items). */
  toolResults(i: number): string[] {
    const b = this.requests[i]?.body ?? {};
    if (Array.isArray(b.messages)) {
      return b.messages.filter((m: any) => m.role === 'tool').map((m: any) => text(m.content));
    }
    return (b.input ?? []).filter((m: any) => m.type === 'function_call_output').map((m: any) => text(m.output));
  }

  /** The names of the tools request i offered the model. */
  tools(i: number): string[] {
    return (this.requests[i]?.body.tools ?? []).map((t: any) => t.function?.name ?? t.name ?? t.type);
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

function body(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let s = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (s += c));
    req.on('end', () => resolve(s));
    req.on('error', reject);
  });
}

function text(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((p: any) => (typeof p === 'string' ? p : p.text ?? p.output ?? '')).join('');
  return JSON.stringify(content);
}

const chatUsage = { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 };

function chatCompletion(turn: Turn, n: number) {
  const message =
    'tool' in turn
      ? { role: 'assistant', content: null, tool_calls: [{ id: `call_${n}`, type: 'function', function: { name: turn.tool, arguments: JSON.stringify(turn.args) } }] }
      : { role: 'assistant', content: turn.text };
  return {
    id: `chatcmpl_${n}`,
    object: 'chat.completion',
    created: 0,
    model: 'fake-model',
    choices: [{ index: 0, finish_reason: 'tool' in turn ? 'tool_calls' : 'stop', message }],
    usage: chatUsage,
  };
}

function chatChunks(turn: Turn, n: number) {
  const chunk = (delta: object, finish: string | null) => ({
    id: `chatcmpl_${n}`,
    object: 'chat.completion.chunk',
    created: 0,
    model: 'fake-model',
    choices: [{ index: 0, delta, finish_reason: finish }],
  });
  const first =
    'tool' in turn
      ? { role: 'assistant', tool_calls: [{ index: 0, id: `call_${n}`, type: 'function', function: { name: turn.tool, arguments: JSON.stringify(turn.args) } }] }
      : { role: 'assistant', content: turn.text };
  return [
    chunk(first, null),
    chunk({}, 'tool' in turn ? 'tool_calls' : 'stop'),
    { id: `chatcmpl_${n}`, object: 'chat.completion.chunk', created: 0, model: 'fake-model', choices: [], usage: chatUsage },
  ];
}

function response(turn: Turn, n: number) {
  const output =
    'tool' in turn
      ? [{ type: 'function_call', id: `fc_${n}`, call_id: `call_${n}`, name: turn.tool, arguments: JSON.stringify(turn.args), status: 'completed' }]
      : [{ type: 'message', id: `msg_${n}`, role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: turn.text, annotations: [] }] }];
  return {
    id: `resp_${n}`,
    object: 'response',
    created_at: 0,
    status: 'completed',
    model: 'fake-model',
    output,
    usage: { input_tokens: 1, output_tokens: 1, total_tokens: 2, input_tokens_details: { cached_tokens: 0 }, output_tokens_details: { reasoning_tokens: 0 } },
  };
}
