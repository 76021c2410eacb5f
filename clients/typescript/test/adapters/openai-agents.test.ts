// @jail/sandbox/openai-agents against @openai/agents itself and the real jail binary. The SDK
// ships test doubles but no provider conformance suite, so these tests drive JailSandboxClient
// and its sessions through the SDK's interfaces the way its runtime and tools call them —
// create with a manifest, exec_command's execCommand (with a yield, stdin and Ctrl-C through
// writeStdin), apply_patch's editor, the file calls, persist and hydrate, exposed ports,
// serialize and resume, delete — and one agent run of a SandboxAgent against a fake model.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { applyDiff, OpenAIProvider, Runner, setTracingDisabled } from '@openai/agents';
import { Manifest, SandboxAgent, SandboxExposedPortUnavailableError, SandboxLifecycleError, SandboxUnsupportedFeatureError } from '@openai/agents/sandbox';
import { Sandbox } from '@jail/sandbox';
import { JailSandboxClient, type JailSandboxClientOptions, type JailSandboxSession } from '@jail/sandbox/openai-agents';
import { AgentRun, versionOf } from './agentrun.js';
import { FakeModel } from './model.js';
import { eventually, hostProcessesWith, unique, World } from '../world.js';

setTracingDisabled(true);
const world = new World();
const skip = world.skip();
const options: JailSandboxClientOptions = { read: [world.outer] };
const client = new JailSandboxClient(options);

after(() => {
  assert.deepEqual(world.close(), [], 'sandboxes left behind');
});

/** What execCommand's formatted answer says: the exit code or session id, and the output. */
function parse(answer: string): { exitCode?: number; sessionId?: number; output: string } {
  const exited = /^Process exited with code (\d+)$/m.exec(answer);
  const running = /^Process running with session ID (\d+)$/m.exec(answer);
  const output = answer.slice(answer.indexOf('Output:\n') + 'Output:\n'.length);
  return { exitCode: exited ? Number(exited[1]) : undefined, sessionId: running ? Number(running[1]) : undefined, output };
}

describe(`@openai/agents ${versionOf('@openai/agents')}: JailSandboxClient`, { skip }, () => {
  let session: JailSandboxSession;
  const host = join(world.root, 'host-src');
  before(async () => {
    mkdirSync(join(host, 'tree', 'sub'), { recursive: true });
    writeFileSync(join(host, 'one.txt'), 'from the host\n');
    writeFileSync(join(host, 'tree', 'sub', 'deep.txt'), 'deep\n');
    session = await client.create({
      manifest: new Manifest({
        entries: {
          'README.md': { type: 'file', content: '# hello\n' },
          'src': { type: 'dir', children: { 'main.py': { type: 'file', content: 'print(1)\n' } } },
          'bin/run.sh': { type: 'file', content: '#!/bin/sh\necho ran\n', permissions: 0o755 },
          'one.txt': { type: 'local_file', src: join(host, 'one.txt') },
          'tree': { type: 'local_dir', src: join(host, 'tree') },
        },
        environment: { GREETING: 'hi' },
      }),
    });
  });
  after(async () => {
    await session.delete();
  });

  describe('create', () => {
    test('the manifest root is the cwd, a tmpfs of the sandbox\'s own; entries and environment are there', async () => {
      assert.equal(client.backendId, 'jail');
      assert.equal(session.state.manifest.root, '/workspace');
      assert.equal(await session.running(), true);
      const r = parse(await session.execCommand({ cmd: 'pwd; cat README.md src/main.py one.txt tree/sub/deep.txt; bin/run.sh; echo $GREETING', yieldTimeMs: 10_000 }));
      assert.equal(r.exitCode, 0);
      assert.equal(r.output, '/workspace\n# hello\nprint(1)\nfrom the host\ndeep\nran\nhi\n');
      assert.equal(existsSync('/workspace/README.md'), false, 'not on the host');
      assert.equal((await Sandbox.get(session.state.jailId)).id, session.jail.id);
    });

    test('what jail cannot hold is refused before a sandbox is made', async () => {
      const before = world.sandboxDirs().length;
      await assert.rejects(client.create({ manifest: new Manifest({ entries: { repo: { type: 'git_repo', repo: 'a/b' } } }) }), SandboxUnsupportedFeatureError);
      await assert.rejects(client.create({ manifest: new Manifest({ root: '/' }) }), SandboxUnsupportedFeatureError);
      assert.equal(world.sandboxDirs().length, before);
    });

    test('a root in the workdir is the host directory itself', async () => {
      const dir = join(world.work, 'project');
      mkdirSync(dir, { recursive: true });
      const s = await client.create({ manifest: new Manifest({ root: dir }), options: { workdir: world.work } });
      try {
        assert.equal(parse(await s.execCommand({ cmd: 'pwd; echo written > out.txt' })).output, `${dir}\n`);
        assert.equal(readFileSync(join(dir, 'out.txt'), 'utf8'), 'written\n');
      } finally {
        await s.delete();
      }
    });
  });

  describe('exec_command and write_stdin', () => {
    test('exit codes, stdout and stderr in the order written, workdir, shells', async () => {
      const r = await session.exec({ cmd: 'echo out; echo err >&2; echo out2; exit 3', yieldTimeMs: 10_000 });
      assert.deepEqual([r.exitCode, r.output], [3, 'out\nerr\nout2\n']);
      assert.equal(parse(await session.execCommand({ cmd: 'pwd', workdir: 'src' })).output, '/workspace/src\n');
      assert.equal(parse(await session.execCommand({ cmd: 'echo $0', login: false })).output, '/bin/sh\n');
      assert.equal(parse(await session.execCommand({ cmd: 'echo $0', shell: '/bin/sh' })).output, '/bin/sh\n');
      assert.match(await session.execCommand({ cmd: 'true' }), /^Chunk ID: \w+\nWall time: \d+\.\d{4} seconds\nProcess exited with code 0\nOutput:\n$/);
      await assert.rejects(session.execCommand({ cmd: 'true', workdir: '../etc' }));
    });

    test('a command still running after yield_time_ms gets a session id; write_stdin polls it to its end', async () => {
      const first = parse(await session.execCommand({ cmd: 'echo started; sleep 0.5; echo finished', yieldTimeMs: 100 }));
      assert.equal(first.output, 'started\n');
      assert.equal(first.exitCode, undefined);
      assert.ok(first.sessionId! > 0);
      const second = parse(await session.writeStdin({ sessionId: first.sessionId!, yieldTimeMs: 5000 }));
      assert.deepEqual([second.exitCode, second.output], [0, 'finished\n']);
      assert.match(await session.writeStdin({ sessionId: first.sessionId!, chars: 'x' }), /session not found/);
    });

    test('write_stdin feeds a command reading its stdin', async () => {
      const first = parse(await session.execCommand({ cmd: 'read line; echo got:$line', yieldTimeMs: 100 }));
      assert.ok(first.sessionId);
      const second = parse(await session.writeStdin({ sessionId: first.sessionId!, chars: 'hello\n', yieldTimeMs: 5000 }));
      assert.deepEqual([second.exitCode, second.output], [0, 'got:hello\n']);
    });

    test('Ctrl-C through write_stdin interrupts a command without a terminal; the process is gone', async () => {
      const marker = unique('oa-int');
      const first = parse(await session.execCommand({ cmd: `sleep 1000; : ${marker}`, yieldTimeMs: 100 }));
      assert.ok(hostProcessesWith(marker).length > 0);
      const second = parse(await session.writeStdin({ sessionId: first.sessionId!, chars: '\u0003', yieldTimeMs: 5000 }));
      assert.equal(second.exitCode, 130);
      assert.ok(await eventually(() => hostProcessesWith(marker).length === 0));
    });

    test('tty: a terminal of the sandbox\'s own; Ctrl-C goes through it', async () => {
      const r = parse(await session.execCommand({ cmd: 'tty; test -t 0 && echo interactive', tty: true }));
      assert.equal(r.exitCode, 0);
      assert.match(r.output, /^\/dev\/pts\/\d+\r?\ninteractive\r?\n$/);
      const first = parse(await session.execCommand({ cmd: 'sleep 1000', tty: true, yieldTimeMs: 200 }));
      const second = parse(await session.writeStdin({ sessionId: first.sessionId!, chars: '\u0003', yieldTimeMs: 5000 }));
      assert.equal(second.exitCode, 130);
    });

    test('max_output_tokens truncates what the model sees', async () => {
      const r = parse(await session.execCommand({ cmd: 'seq 1 5000', maxOutputTokens: 20 }));
      assert.ok(r.output.length < 200, r.output);
      assert.match(await session.execCommand({ cmd: 'seq 1 5000', maxOutputTokens: 20 }), /Original token count: \d+/);
    });

    test('runAs is refused: jail runs commands as their creator', async () => {
      await assert.rejects(session.execCommand({ cmd: 'true', runAs: 'nobody' }), SandboxUnsupportedFeatureError);
    });
  });

  describe('files', () => {
    test('apply_patch\'s editor: create, update, move, delete; no way out of the workspace', async () => {
      const editor = session.createEditor();
      const create = '+line one\n+line two\n';
      const update = '@@\n line one\n-line two\n+line 2\n';
      const move = '@@\n line one\n+line 1.5\n line 2\n';
      await editor.createFile({ type: 'create_file', path: 'notes/a.txt', diff: create });
      const created = applyDiff('', create, 'create');
      assert.equal(new TextDecoder().decode(await session.readFile({ path: 'notes/a.txt' })), created);
      await editor.updateFile({ type: 'update_file', path: 'notes/a.txt', diff: update });
      await editor.updateFile({ type: 'update_file', path: 'notes/a.txt', moveTo: 'notes/b.txt', diff: move });
      assert.equal(new TextDecoder().decode(await session.readFile({ path: 'notes/b.txt' })), applyDiff(applyDiff(created, update), move));
      assert.equal(await session.pathExists('notes/a.txt'), false);
      await editor.deleteFile({ type: 'delete_file', path: 'notes/b.txt' });
      assert.equal(await session.pathExists('/workspace/notes/b.txt'), false);
      await assert.rejects(editor.createFile({ type: 'create_file', path: '../../etc/x', diff: '+x\n' }));
    });

    test('readFile with maxBytes, listDir, pathExists, directoryExists', async () => {
      assert.equal(new TextDecoder().decode(await session.readFile({ path: 'README.md', maxBytes: 3 })), '# h');
      const entries = await session.listDir({ path: 'src' });
      assert.deepEqual(entries, [{ name: 'main.py', path: 'src/main.py', type: 'file' }]);
      assert.ok((await session.listDir({ path: '.' })).some((e) => e.name === 'tree' && e.type === 'dir'));
      assert.deepEqual([await session.pathExists('src/main.py'), await session.pathExists('nope')], [true, false]);
      assert.deepEqual([await session.directoryExists('src'), await session.directoryExists('README.md')], [true, false]);
    });

    test('viewImage: an image the sandbox holds', async () => {
      // The smallest PNG: a 1x1 transparent pixel.
      const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=', 'base64');
      await session.jail.files.write('/workspace/pixel.png', png);
      const image = (await session.viewImage({ path: 'pixel.png' })) as unknown as Record<string, unknown>;
      assert.match(JSON.stringify(image), /image\/png/);
      await assert.rejects(session.viewImage({ path: 'missing.png' }), /not found/);
    });

    test('materializeEntry and applyManifest write into the running workspace', async () => {
      await session.materializeEntry({ path: 'added/x.txt', entry: { type: 'file', content: 'x\n' } });
      await session.applyManifest(new Manifest({ entries: { 'later.txt': { type: 'file', content: 'later\n' } }, environment: { LATER: 'yes' } }));
      assert.equal(parse(await session.execCommand({ cmd: 'cat added/x.txt later.txt; echo $LATER' })).output, 'x\nlater\nyes\n');
      assert.ok('later.txt' in session.state.manifest.entries);
    });
  });

  describe('workspace persistence', () => {
    test('persistWorkspace is a tar that hydrateWorkspace puts back into another sandbox', async () => {
      const tar = await session.persistWorkspace();
      const file = join(world.root, 'ws.tar');
      writeFileSync(file, tar);
      assert.match(execFileSync('tar', ['-tf', file], { encoding: 'utf8' }), /^workspace\/README\.md$/m);
      const other = await client.create();
      try {
        await other.execCommand({ cmd: 'echo stale > stale.txt' });
        await other.hydrateWorkspace(tar);
        assert.equal(parse(await other.execCommand({ cmd: 'cat README.md tree/sub/deep.txt; ls stale.txt 2>&1 | grep -c "No such"' })).output, '# hello\ndeep\n1\n');
      } finally {
        await other.delete();
      }
    });

    test('hydrateWorkspace takes a tar of the root\'s contents too (tar -C root -cf - .), within the archive limits', async () => {
      const src = join(world.root, 'contents');
      mkdirSync(join(src, 'd'), { recursive: true });
      writeFileSync(join(src, 'd', 'c.txt'), 'contents\n');
      const tar = execFileSync('tar', ['-C', src, '-cf', '-', '.']);
      const other = await client.create();
      try {
        await other.hydrateWorkspace(new Uint8Array(tar));
        assert.equal(parse(await other.execCommand({ cmd: 'cat d/c.txt' })).output, 'contents\n');
        await assert.rejects(other.hydrateWorkspace(tar, { archiveLimits: { maxInputBytes: 10 } }), /limit/);
      } finally {
        await other.delete();
      }
    });
  });

  describe('ports, lifecycle, serialization', () => {
    test('resolveExposedPort: only with host networking, only the configured ports', async () => {
      await assert.rejects(session.resolveExposedPort(8080), SandboxExposedPortUnavailableError);
      const h = await new JailSandboxClient({ ...options, network: 'host', exposedPorts: [8080] }).create();
      try {
        assert.deepEqual(await h.resolveExposedPort(8080), { host: '127.0.0.1', port: 8080, tls: false, query: '' });
        assert.ok(h.state.exposedPorts?.['8080']);
        await assert.rejects(h.resolveExposedPort(9090), SandboxExposedPortUnavailableError);
      } finally {
        await h.delete();
      }
    });

    test('serialize, deserialize, resume: the same sandbox; client.delete removes it; a gone one does not resume', async () => {
      const s = await client.create({ manifest: new Manifest({ environment: { KEPT: 'k' } }) });
      await s.execCommand({ cmd: 'echo kept > kept.txt' });
      const json = JSON.parse(JSON.stringify(await client.serializeSessionState(s.state)));
      const state = await client.deserializeSessionState(json);
      assert.equal(state.jailId, s.state.jailId);
      const resumed = await client.resume(state);
      assert.equal(parse(await resumed.execCommand({ cmd: 'cat kept.txt; echo $KEPT' })).output, 'kept\nk\n');
      await client.delete(state);
      assert.equal(await resumed.running(), false);
      await assert.rejects(client.resume(state), SandboxLifecycleError);
      await client.delete(state);
      await s.close();
    });

    test('delete removes the sandbox and the private workdir the client made', async () => {
      const s = await client.create();
      const workdir = s.jail.info.workdir!;
      assert.ok(existsSync(workdir));
      const marker = unique('oa-bg');
      await s.execCommand({ cmd: `sleep 1000; : ${marker}`, yieldTimeMs: 50 });
      await s.delete();
      await s.delete();
      await assert.rejects(Sandbox.get(s.state.jailId), { code: 'not_found' });
      assert.equal(existsSync(workdir), false);
      assert.ok(await eventually(() => hostProcessesWith(marker).length === 0));
    });
  });
});

describe(`@openai/agents ${versionOf('@openai/agents')} agent run`, { skip }, () => {
  test('a SandboxAgent: exec_command runs in the jail sandbox, twice, and the model gets the output', async () => {
    const run = new AgentRun(world, '/workspace');
    const model = await FakeModel.start([
      { tool: 'exec_command', args: { cmd: run.first } },
      { tool: 'exec_command', args: { cmd: run.second } },
      { text: 'done' },
    ]);
    const before = world.sandboxDirs();
    try {
      const agent = new SandboxAgent({ name: 'jail-test', instructions: 'You run commands.', model: 'fake-model', defaultManifest: new Manifest({}) });
      const runner = new Runner({ modelProvider: new OpenAIProvider({ baseURL: model.url, apiKey: 'sk-fake' }), sandbox: { client } });
      const result = await runner.run(agent, 'go');
      assert.equal(result.finalOutput, 'done');
      for (const name of ['exec_command', 'write_stdin', 'apply_patch']) {
        assert.ok(model.tools(0).includes(name), `tools offered: ${model.tools(0)}`);
      }
      assert.ok(model.requests.every((r) => r.path === '/v1/responses'));
      run.check(model);
      assert.match(model.toolResults(1)[0]!, /Process exited with code 0/);
    } finally {
      await model.close();
    }
    assert.deepEqual(world.sandboxDirs(), before, 'the run removed the sandbox it created');
  });
});
