// The OpenAI Agents SDK's own E2B provider (@openai/agents-extensions, E2BSandboxClient),
// unmodified, on jail's E2B endpoint: a fake model asks for a shell command, and its next request
// must carry the command's output, which must come from inside a jail sandbox.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Runner, setTracingDisabled } from '@openai/agents';
import { OpenAIProvider } from '@openai/agents-openai';
import { SandboxAgent, Manifest } from '@openai/agents/sandbox';
import { E2BSandboxClient } from '@openai/agents-extensions/sandbox/e2b';
import { Sandbox } from 'e2b';
import { startEndpoint } from './endpoint.mjs';
import { startModel, toolCall, text } from './fake-model.mjs';

let ep;
before(async () => { ep = await startEndpoint(); });
after(async () => { await ep?.stop(); });

test('an agent runs its shell tool in a jail sandbox through E2BSandboxClient', async () => {
  setTracingDisabled(true);
  const cmd = `echo marker-$((6*7)); readlink /proc/self/ns/pid; pwd; cat ${ep.secret} 2>&1 || echo no-secret`;
  const model = await startModel((i) => (i === 0 ? toolCall(i, 'exec_command', { cmd }) : text(i, 'done')));
  try {
    const agent = new SandboxAgent({ name: 'jail-e2b', instructions: 'Run the command.', model: 'fake-model', defaultManifest: new Manifest({}) });
    const runner = new Runner({
      modelProvider: new OpenAIProvider({ baseURL: model.url, apiKey: 'sk-fake' }),
      sandbox: { client: new E2BSandboxClient({ timeout: 120 }) },
    });
    const result = await runner.run(agent, 'go');
    assert.equal(result.finalOutput, 'done');
    assert.equal(model.requests.length, 2);
    assert.ok(model.requests[0].body.tools.some((t) => t.name === 'exec_command'), 'the model was offered exec_command');
    const call = model.requests[1].body.input.find((item) => item.type === 'function_call_output');
    const output = typeof call?.output === 'string' ? call.output : JSON.stringify(call?.output);
    assert.match(output, /marker-42/, 'the command ran and its output went back to the model');
    const ns = output.match(/pid:\[\d+\]/)?.[0];
    assert.ok(ns, `no pid namespace in ${output}`);
    assert.notEqual(ns, ep.hostPidNS, 'the command ran in the host pid namespace');
    assert.match(output, /\/workspace/, 'the provider works in /workspace');
    assert.match(output, /no-secret/);
    assert.doesNotMatch(output, /host secret key/);
  } finally {
    model.close();
  }
  assert.deepEqual(await Sandbox.list().nextItems(), [], 'the provider deleted its sandbox');
});
