// A fake OpenAI model on loopback, speaking the Responses API without streaming: each request is
// answered by script(index, body), and kept for the test to read.
import http from 'node:http';

export async function startModel(script) {
  const requests = [];
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString()) : {};
      requests.push({ url: req.url, body });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(script(requests.length - 1, body)));
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return { requests, url: `http://127.0.0.1:${server.address().port}/v1`, close: () => server.close() };
}

const usage = { input_tokens: 1, output_tokens: 1, total_tokens: 2, input_tokens_details: { cached_tokens: 0 }, output_tokens_details: { reasoning_tokens: 0 } };

function response(i, output) {
  return { id: `resp_${i}`, object: 'response', created_at: 0, status: 'completed', model: 'fake-model', output, usage };
}

// toolCall answers with one call of tool name with args.
export function toolCall(i, name, args) {
  return response(i, [{ type: 'function_call', id: `fc_${i}`, call_id: `call_${i}`, name, arguments: JSON.stringify(args), status: 'completed' }]);
}

// text answers with a final message.
export function text(i, message) {
  return response(i, [{ type: 'message', id: `msg_${i}`, role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: message, annotations: [] }] }]);
}
