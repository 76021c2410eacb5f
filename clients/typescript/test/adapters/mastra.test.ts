// @jail/sandbox/mastra against @mastra/core itself and the real jail binary. Mastra's sandbox
// conformance suite is an unpublished workspace package, so these tests cover its domains
// through Mastra's public API — lifecycle (driven by the base class's _start/_stop/_destroy, as
// the suite does), command execution, process management, reconnection — and one agent run with
// a Workspace against a fake model.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Agent } from '@mastra/core/agent';
import { Workspace } from '@mastra/core/workspace';
import { Sandbox } from '@jail/sandbox';
import { JailSandbox, MASTRA_ID_LABEL, type JailSandboxOptions } from '@jail/sandbox/mastra';
import { AgentRun, versionOf } from './agentrun.js';
import { FakeModel } from './model.js';
import { eventually, hostProcessesWith, unique, World } from '../world.js';

const world = new World();
const skip = world.skip();
const options: JailSandboxOptions = { workdir: world.work, read: [world.outer] };

after(() => {
  assert.deepEqual(world.close(), [], 'sandboxes left behind');
});

/** A started sandbox of its own for a test, destroyed after fn. */
async function withSandbox(opts: JailSandboxOptions, fn: (sb: JailSandbox) => Promise<void>): Promise<void> {
  const sb = new JailSandbox({ ...options, ...opts });
  try {
    await sb._start();
    await fn(sb);
  } finally {
    await sb._destroy();
  }
}

describe(`@mastra/core ${versionOf('@mastra/core')}: JailSandbox`, { skip }, () => {
  let sb: JailSandbox;
  before(async () => {
    sb = new JailSandbox(options);
    await sb._start();
  });
  after(async () => {
    await sb._destroy();
  });

  describe('lifecycle', () => {
    test('identification: id (the jail sandbox\'s name), name, provider; ids differ', async () => {
      assert.match(sb.id, /^mastra-[0-9a-f]{12}$/);
      assert.equal(sb.name, 'JailSandbox');
      assert.equal(sb.provider, 'jail');
      assert.notEqual(new JailSandbox(options).id, sb.id);
      const jail = await Sandbox.get(sb.id);
      assert.equal(jail.id, sb.jail.id);
      assert.equal(jail.info.labels[MASTRA_ID_LABEL], sb.id);
    });

    test('status: pending before start, running after; start again is harmless; stop, then destroy', async () => {
      const fresh = new JailSandbox(options);
      assert.equal(fresh.status, 'pending');
      assert.deepEqual(await fresh._start(), { outcome: 'created' });
      assert.equal(fresh.status, 'running');
      await fresh.start();
      assert.equal(fresh.status, 'running');
      await fresh._stop();
      assert.equal(fresh.status, 'stopped');
      await fresh._destroy();
      assert.equal(fresh.status, 'destroyed');
      await assert.rejects(Sandbox.get(fresh.id), { code: 'not_found' });
    });

    test('getInfo: what the sandbox is, with jail\'s times', async () => {
      const info = await sb.getInfo();
      assert.equal(info.id, sb.id);
      assert.equal(info.name, sb.name);
      assert.equal(info.provider, 'jail');
      assert.equal(info.status, 'running');
      assert.ok(info.createdAt instanceof Date && info.lastUsedAt instanceof Date);
      assert.equal(info.metadata?.jailId, sb.jail.id);
      assert.equal(info.metadata?.workdir, world.work);
    });

    test('executeCommand before start starts it (the workspace calls it first)', async () => {
      const lazy = new JailSandbox(options);
      try {
        assert.equal((await lazy.executeCommand('echo', ['lazy'])).stdout, 'lazy\n');
        assert.equal(lazy.status, 'running');
      } finally {
        await lazy._destroy();
      }
    });
  });

  describe('command execution', () => {
    test('a command, its stdout and stderr, exit codes', async () => {
      const ok = await sb.executeCommand('echo', ['hello']);
      assert.deepEqual([ok.success, ok.exitCode, ok.stdout, ok.stderr, ok.timedOut], [true, 0, 'hello\n', '', false]);
      assert.equal(ok.command, 'echo hello');
      assert.equal((await sb.executeCommand('sh', ['-c', 'echo "error message" >&2'])).stderr, 'error message\n');
      const fail = await sb.executeCommand('sh', ['-c', 'exit 1']);
      assert.deepEqual([fail.success, fail.exitCode], [false, 1]);
    });

    test('arguments are quoted as words', async () => {
      assert.equal((await sb.executeCommand('echo', ['arg1', 'arg2', 'arg3'])).stdout, 'arg1 arg2 arg3\n');
      assert.equal((await sb.executeCommand('printf', ['%s|', 'hello world', "it's", '$HOME', '`x`'])).stdout, "hello world|it's|$HOME|`x`|");
    });

    test('env: the command\'s, over the sandbox\'s overlay (setEnv)', async () => {
      assert.equal((await sb.executeCommand('sh', ['-c', 'echo "$VAR1 $VAR2"'], { env: { VAR1: 'first', VAR2: 'second' } })).stdout, 'first second\n');
      await withSandbox({ env: { SANDBOX_VAR: 'original', EXTRA: 'kept' } }, async (e) => {
        const r = await e.executeCommand('sh', ['-c', 'echo $SANDBOX_VAR $EXTRA $CMD_VAR'], { env: { SANDBOX_VAR: 'overridden', CMD_VAR: 'added' } });
        assert.equal(r.stdout, 'overridden kept added\n');
        e.setEnv((env) => ({ ...env, LATER: 'set' }));
        assert.equal((await e.executeCommand('sh', ['-c', 'echo $LATER'])).stdout, 'set\n');
      });
    });

    test('cwd: absolute, and relative to the working directory', async () => {
      assert.equal((await sb.executeCommand('pwd', [], { cwd: '/tmp' })).stdout, '/tmp\n');
      await withSandbox({ workingDirectory: world.work }, async (w) => {
        await w.executeCommand('mkdir', ['-p', 'sub']);
        assert.equal((await w.executeCommand('pwd')).stdout, `${world.work}\n`);
        assert.equal((await w.executeCommand('pwd', [], { cwd: 'sub' })).stdout, `${world.work}/sub\n`);
      });
    });

    test('timeout: exit code 124, timedOut', async () => {
      const r = await sb.executeCommand('sleep', ['10'], { timeout: 100 });
      assert.deepEqual([r.success, r.exitCode, r.timedOut], [false, 124, true]);
    });

    test('onStdout and onStderr get the output as it comes', async () => {
      const seen: string[] = [];
      const r = await sb.executeCommand('sh', ['-c', 'for i in 1 2 3; do echo $i; echo e$i >&2; sleep 0.05; done'], {
        onStdout: (d) => seen.push(`out:${d}`),
        onStderr: (d) => seen.push(`err:${d}`),
      });
      assert.equal(r.stdout, '1\n2\n3\n');
      assert.ok(seen.length >= 6, `as it came: ${JSON.stringify(seen)}`);
    });

    test('abortSignal kills the command inside the sandbox', async () => {
      const marker = unique('mastra-abort');
      const ac = new AbortController();
      const p = sb.executeCommand('sh', ['-c', `echo started; sleep 60; : ${marker}`], {
        abortSignal: ac.signal,
        onStdout: () => {
          assert.ok(hostProcessesWith(marker).length > 0, 'it runs');
          ac.abort();
        },
      });
      const r = await p;
      assert.deepEqual([r.success, r.killed, r.stdout], [false, true, 'started\n']);
      assert.ok(await eventually(() => hostProcessesWith(marker).length === 0), 'the command is gone');
    });

    test('concurrent commands do not interfere', async () => {
      const rs = await Promise.all([1, 2, 3].map((i) => sb.executeCommand('sh', ['-c', 'echo $VAR'], { env: { VAR: `value${i}` } })));
      assert.deepEqual(rs.map((r) => r.stdout), ['value1\n', 'value2\n', 'value3\n']);
    });

    test('writeFiles: contents and modes, relative to the working directory', async () => {
      await sb.writeFiles([
        { path: `${world.work}/wf/a.txt`, content: 'A' },
        { path: `${world.work}/wf/run.sh`, content: Buffer.from('#!/bin/sh\necho ran\n'), mode: 0o700 },
      ]);
      assert.equal(readFileSync(`${world.work}/wf/a.txt`, 'utf8'), 'A');
      assert.equal((await sb.executeCommand(`${world.work}/wf/run.sh`)).stdout, 'ran\n');
      await assert.rejects(sb.writeFiles([{ path: `${world.work}/wf/bad`, content: 'x', mode: 0o4755 }]));
    });

    test('networking: a port URL only when the sandbox shares the host\'s network', async () => {
      assert.equal(await sb.networking.getPortUrl(8080), null);
      await withSandbox({ network: 'host' }, async (h) => {
        assert.equal(await h.networking.getPortUrl(8080), 'http://127.0.0.1:8080');
      });
    });
  });

  describe('process management', () => {
    test('spawn: a handle with the pid inside the sandbox; stdout, stderr, exit codes, env', async () => {
      const h = await sb.processes.spawn('echo hello; echo "error msg" >&2; exit 42', { env: { MY_VAR: 'x' } });
      assert.match(h.pid, /^\d+$/);
      assert.ok(Number(h.pid) > 0);
      const r = await h.wait();
      assert.deepEqual([r.success, r.exitCode, r.stdout, r.stderr], [false, 42, 'hello\n', 'error msg\n']);
      assert.equal((await (await sb.processes.spawn('echo $MY_VAR', { env: { MY_VAR: 'test_value' } })).wait()).stdout, 'test_value\n');
    });

    test('callbacks, retained output, exitCode undefined while it runs, wait() again', async () => {
      const chunks: string[] = [];
      const h = await sb.processes.spawn('sleep 0.2; echo hello; echo err >&2', { onStdout: (d) => chunks.push(d), onStderr: (d) => chunks.push(d) });
      assert.equal(h.exitCode, undefined);
      const r1 = await h.wait();
      assert.equal(h.exitCode, 0);
      assert.deepEqual(chunks.sort(), ['err\n', 'hello\n']);
      assert.equal(h.stdout, 'hello\n');
      assert.equal(h.stderr, 'err\n');
      assert.deepEqual(await h.wait(), r1);
    });

    test('kill: true for a running process, false once it has ended; the process is gone', async () => {
      const marker = unique('mastra-kill');
      const h = await sb.processes.spawn(`sleep 60; : ${marker}`);
      assert.ok(await eventually(() => hostProcessesWith(marker).length === 1));
      assert.equal(await h.kill(), true);
      assert.equal((await h.wait()).success, false);
      assert.ok(await eventually(() => hostProcessesWith(marker).length === 0));
      assert.equal(await h.kill(), false);
    });

    test('sendStdin, closeStdin, the writer stream; an ended process refuses stdin', async () => {
      const head = await sb.processes.spawn('head -1');
      await head.sendStdin('hello from stdin\nnot read\n');
      assert.equal((await head.wait()).stdout, 'hello from stdin\n');
      await assert.rejects(head.sendStdin('data'));
      const cat = await sb.processes.spawn('cat');
      await new Promise<void>((resolve, reject) => cat.writer.write('writer-test\n', (e) => (e ? reject(e) : resolve())));
      await cat.closeStdin();
      assert.equal((await cat.wait()).stdout, 'writer-test\n');
      const ignored = await sb.processes.spawn('cat', { stdinMode: 'ignore' });
      assert.equal((await ignored.wait()).exitCode, 0, 'EOF at once');
    });

    test('the reader stream gets stdout and ends with the process', async () => {
      const h = await sb.processes.spawn('echo stream-test');
      const chunks: string[] = [];
      h.reader.on('data', (c: Buffer) => chunks.push(c.toString()));
      const ended = new Promise<void>((resolve) => h.reader.on('end', resolve));
      await h.wait();
      await ended;
      assert.equal(chunks.join(''), 'stream-test\n');
    });

    test('list: running and ended ones, with their command; get; manager kill', async () => {
      const running = await sb.processes.spawn('sleep 60');
      const done = await sb.processes.spawn('echo done');
      await done.wait();
      const list = await sb.processes.list();
      assert.deepEqual(list.find((p) => p.pid === running.pid), { pid: running.pid, command: 'sleep 60', running: true, exitCode: undefined });
      const ended = list.find((p) => p.pid === done.pid);
      assert.deepEqual([ended?.running, ended?.exitCode], [false, 0]);
      assert.equal((await sb.processes.get(running.pid))?.pid, running.pid);
      assert.equal(await sb.processes.get('99999'), undefined);
      assert.equal(await sb.processes.kill(running.pid), true);
      assert.equal((await running.wait()).success, false);
      assert.equal(await sb.processes.kill('99999'), false);
    });

    test('get finds a process another client started, with its output so far', async () => {
      const other = await sb.jail.processes.start('echo from-elsewhere; sleep 60');
      const h = await sb.processes.get(String(other.pid));
      assert.ok(h);
      assert.ok(await eventually(() => h.stdout === 'from-elsewhere\n'));
      assert.equal(h.exitCode, undefined);
      await h.kill();
      assert.equal((await h.wait()).killed, true);
    });

    test('a spawn\'s timeout ends it with 124', async () => {
      const r = await (await sb.processes.spawn('sleep 10', { timeout: 100 })).wait();
      assert.deepEqual([r.exitCode, r.timedOut], [124, true]);
    });
  });

  describe('reconnection', () => {
    test('stop kills background processes; files stay, the id too; start connects again', async () => {
      await withSandbox({}, async (r) => {
        const marker = unique('mastra-stop');
        await r.processes.spawn(`sleep 60; : ${marker}`);
        assert.ok(await eventually(() => hostProcessesWith(marker).length === 1));
        await r.executeCommand('sh', ['-c', 'echo kept > /tmp/reconnect.txt']);
        const id = r.id;
        const jailId = r.jail.id;
        await r._stop();
        assert.ok(await eventually(() => hostProcessesWith(marker).length === 0), 'stop killed it');
        assert.deepEqual(await r._start(), { outcome: 'connected' });
        assert.deepEqual([r.id, r.jail.id], [id, jailId]);
        assert.equal((await r.executeCommand('cat', ['/tmp/reconnect.txt'])).stdout, 'kept\n');
      });
    });

    test('another JailSandbox with the same id connects to the same sandbox', async () => {
      const id = unique('shared');
      const first = new JailSandbox({ ...options, id });
      const second = new JailSandbox({ ...options, id });
      try {
        assert.deepEqual(await first._start(), { outcome: 'created' });
        await first.executeCommand('sh', ['-c', 'echo one > ~/shared']);
        assert.deepEqual(await second._start(), { outcome: 'connected' });
        assert.equal((await second.executeCommand('sh', ['-c', 'cat ~/shared'])).stdout, 'one\n');
      } finally {
        await first._destroy();
        await second._destroy();
      }
    });

    test('the Python client reaches the same sandbox by its id', async () => {
      const id = unique('from-python');
      await withSandbox({ id }, async (m) => {
        await m.executeCommand('sh', ['-c', 'echo written by mastra > ~/note']);
        const program = `from jail_sandbox import Sandbox\nr = Sandbox.get(${JSON.stringify(id)}).exec("cat ~/note", merge_output=True)\nprint(r.exit_code, r.stdout.decode(), end="")`;
        const out = execFileSync('python3', ['-c', program], { encoding: 'utf8', env: { ...process.env, PYTHONPATH: join(process.cwd(), '..', 'python') } });
        assert.equal(out, '0 written by mastra\n');
      });
    });
  });
});

describe(`@mastra/core ${versionOf('@mastra/core')} agent run`, { skip }, () => {
  test('an Agent with a Workspace: execute_command runs in the jail sandbox, twice, and the model gets the output', async () => {
    const sandbox = new JailSandbox(options);
    const workspace = new Workspace({ sandbox });
    const run = new AgentRun(world, world.work);
    const tool = 'mastra_workspace_execute_command';
    const model = await FakeModel.start([
      { tool, args: { command: run.first } },
      { tool, args: { command: run.second } },
      { text: 'done' },
    ]);
    try {
      const agent = new Agent({
        id: 'jail-test',
        name: 'jail-test',
        instructions: 'You run commands.',
        model: { id: 'openai/fake-model', url: model.url, apiKey: 'sk-fake' },
        workspace,
      });
      const out = await agent.generate('go');
      assert.equal(out.text, 'done');
      assert.ok(model.tools(0).includes(tool), `tools offered: ${model.tools(0)}`);
      assert.ok(model.requests.every((r) => r.path === '/v1/chat/completions'));
      run.check(model);
      assert.equal(readFileSync(run.file, 'utf8'), run.marker.toUpperCase(), 'written in the workdir, on the host');
      assert.equal(sandbox.status, 'running');
    } finally {
      await model.close();
      await workspace.destroy();
    }
    assert.equal(sandbox.status, 'destroyed');
    await assert.rejects(Sandbox.get(sandbox.id), { code: 'not_found' });
    assert.ok(existsSync(run.file), 'the workdir outlives the sandbox');
  });
});
