// @jail/sandbox/deepagents against deepagents itself and the real jail binary. deepagents
// publishes no conformance suite (@langchain/sandbox-standard-tests is not on npm), so these
// tests cover that suite's list through deepagents' public API: lifecycle and two-step
// initialization, command execution, upload and download, BaseSandbox's write, read, edit, ls,
// grep, glob and delete on top of them, initial files, the provider's list, getOrCreate and
// delete — and one agent run of createDeepAgent against a fake model.

import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ChatOpenAI } from '@langchain/openai';
import { createDeepAgent, isSandboxBackend, SandboxError } from 'deepagents';
import { Sandbox } from '@jail/sandbox';
import { JailSandbox, JailSandboxProvider, type JailSandboxOptions } from '@jail/sandbox/deepagents';
import { AgentRun, versionOf } from './agentrun.js';
import { FakeModel } from './model.js';
import { unique, World } from '../world.js';

const world = new World();
const skip = world.skip();
const options: JailSandboxOptions = { workdir: world.work, read: [world.outer] };
const at = (rel: string) => join(world.work, rel);

after(() => {
  assert.deepEqual(world.close(), [], 'sandboxes left behind');
});

async function rejectsWithCode(p: Promise<unknown>, code: string): Promise<void> {
  await assert.rejects(p, (e: unknown) => SandboxError.isInstance(e) && e.code === code);
}

describe(`deepagents ${versionOf('deepagents')}: JailSandbox`, { skip }, () => {
  let sb: JailSandbox;
  before(async () => {
    sb = await JailSandbox.create(options);
  });
  after(async () => {
    await sb.close();
  });

  describe('lifecycle', () => {
    test('create: a running jail sandbox, a backend deepagents can execute in', async () => {
      assert.match(sb.id, /^jb_[0-9a-f]{12}$/);
      assert.equal(sb.isRunning, true);
      assert.equal(isSandboxBackend(sb), true);
      assert.equal((await Sandbox.get(sb.id)).info.state, 'running');
    });

    test('close removes the sandbox; a second close does nothing', async () => {
      const tmp = await JailSandbox.create(options);
      const id = tmp.id;
      await tmp.close();
      assert.equal(tmp.isRunning, false);
      await assert.rejects(Sandbox.get(id), { code: 'not_found' });
      await tmp.close();
      await rejectsWithCode(tmp.execute('true'), 'NOT_INITIALIZED');
    });

    test('two-step initialization; a second initialize is ALREADY_INITIALIZED', async () => {
      const tmp = new JailSandbox(options);
      try {
        assert.equal(tmp.isRunning, false);
        assert.equal(tmp.id, '');
        await rejectsWithCode(tmp.execute('true'), 'NOT_INITIALIZED');
        await tmp.initialize();
        assert.equal(tmp.isRunning, true);
        assert.match(tmp.id, /^jb_/);
        await rejectsWithCode(tmp.initialize(), 'ALREADY_INITIALIZED');
      } finally {
        await tmp.close();
      }
    });

    test('connect by id or name finds the same sandbox; a missing one is SANDBOX_NOT_FOUND', async () => {
      const name = unique('da');
      const tmp = await JailSandbox.create({ ...options, name });
      try {
        await tmp.execute('echo kept > ~/kept');
        for (const key of [tmp.id, name]) {
          const again = await JailSandbox.connect(key);
          assert.equal(again.id, tmp.id);
          assert.equal((await again.execute('cat ~/kept')).output, 'kept\n');
        }
      } finally {
        await tmp.close();
      }
      await rejectsWithCode(JailSandbox.connect(name), 'SANDBOX_NOT_FOUND');
    });
  });

  describe('command execution', () => {
    test('echo, exit codes, multiline output', async () => {
      assert.deepEqual(await sb.execute('echo "hello"'), { output: 'hello\n', exitCode: 0, truncated: false });
      assert.equal((await sb.execute('exit 42')).exitCode, 42);
      assert.equal((await sb.execute('echo line1 && echo line2 && echo line3')).output, 'line1\nline2\nline3\n');
    });

    test('stderr is in the output, in the order written', async () => {
      const r = await sb.execute('echo a; echo b >&2; echo c');
      assert.equal(r.output, 'a\nb\nc\n');
    });

    test('variables, a command that does not exist, state between calls', async () => {
      assert.equal((await sb.execute('export MY_VAR=test_value && echo $MY_VAR')).output, 'test_value\n');
      const r = await sb.execute('nonexistent_command_12345');
      assert.equal(r.exitCode, 127);
      assert.match(r.output, /not found/);
      await sb.execute('echo 1 > ~/state');
      assert.equal((await sb.execute('cat ~/state')).output, '1\n');
    });

    test('the sandbox\'s command timeout ends a command with 124', async () => {
      const tmp = await JailSandbox.create({ ...options, timeout: 300 });
      try {
        const r = await tmp.execute('echo started; sleep 30');
        assert.equal(r.exitCode, 124);
        assert.match(r.output, /^started\n.*timed out/s);
      } finally {
        await tmp.close();
      }
    });

    test('output past maxOutputBytes is cut and flagged', async () => {
      const tmp = await JailSandbox.create({ ...options, maxOutputBytes: 9 });
      try {
        const r = await tmp.execute("printf 'ééééééé'"); // 14 bytes; the 9th is half of a character
        assert.deepEqual([r.output, r.truncated], ['éééé', true]);
      } finally {
        await tmp.close();
      }
    });
  });

  describe('upload and download', () => {
    test('round trip of bytes, several files at once', async () => {
      const bytes = new Uint8Array(256).map((_, i) => i);
      const up = await sb.uploadFiles([
        [at('ud/bin.dat'), bytes],
        [at('ud/a.txt'), new TextEncoder().encode('Content 1')],
      ]);
      assert.deepEqual(up, [
        { path: at('ud/bin.dat'), error: null },
        { path: at('ud/a.txt'), error: null },
      ]);
      const [bin, a] = await sb.downloadFiles([at('ud/bin.dat'), at('ud/a.txt')]);
      assert.deepEqual(bin!.content, bytes);
      assert.ok(bin!.content instanceof Uint8Array);
      assert.equal(new TextDecoder().decode(a!.content!), 'Content 1');
      assert.deepEqual(readFileSync(at('ud/bin.dat')), Buffer.from(bytes), 'the workdir is the host directory');
    });

    test('failures are per file: not found, a directory, not permitted', async () => {
      const down = await sb.downloadFiles([at('nonexistent-12345.txt'), at('ud'), at('ud/a.txt')]);
      assert.deepEqual(down.map((d) => d.error), ['file_not_found', 'is_directory', null]);
      assert.equal(down[0]!.content, null);
      const up = await sb.uploadFiles([
        ['/usr/jail-may-not', new Uint8Array([1])],
        [at('ud/b.txt'), new Uint8Array([2])],
      ]);
      assert.deepEqual(up.map((u) => u.error), ['permission_denied', null]);
      assert.equal(existsSync('/usr/jail-may-not'), false);
    });
  });

  describe("BaseSandbox's file tools on execute, upload and download", () => {
    test('write: new, parents, overwrite, special characters, unicode', async () => {
      const special = 'Special chars: $VAR, `command`, $(subshell)\nTab\there\nBackslash: \\';
      for (const [rel, content] of [
        ['wt/new.txt', 'Hello\nLine 2'],
        ['wt/deep/nested/dir/file.txt', 'nested'],
        ['wt/special.txt', special],
        ['wt/unicode.txt', 'Hello 👋 世界 Привет'],
        ['wt/dir with spaces/file name.txt', 'spaces'],
      ]) {
        const r = await sb.write(at(rel!), content!);
        assert.equal(r.error, undefined, rel);
        assert.equal((await sb.execute(`cat '${at(rel!)}'`)).output, content, rel);
      }
      assert.equal((await sb.write(at('wt/new.txt'), 'Second content')).error, undefined);
      assert.equal(readFileSync(at('wt/new.txt'), 'utf8'), 'Second content');
    });

    test('read: line numbers, offset and limit, a missing file', async () => {
      await sb.write(at('rd/rows.txt'), Array.from({ length: 20 }, (_, i) => `Row_${i + 1}_content`).join('\n'));
      const all = await sb.read(at('rd/rows.txt'));
      assert.equal(all.error, undefined);
      assert.match(String(all.content), /Row_1_content[\s\S]*Row_20_content/);
      const part = String((await sb.read(at('rd/rows.txt'), 10, 5)).content);
      assert.ok(part.includes('Row_11_content') && part.includes('Row_15_content'), part);
      assert.ok(!part.includes('Row_10_content') && !part.includes('Row_16_content'), part);
      const missing = await sb.read(at('rd/nonexistent.txt'));
      assert.match(String(missing.error).toLowerCase(), /not found/);
    });

    test('edit: one, all, and a string that is not there', async () => {
      await sb.write(at('ed/e.txt'), 'Hello World, World');
      assert.equal((await sb.edit(at('ed/e.txt'), 'Hello', 'Bye')).error, undefined);
      assert.equal((await sb.edit(at('ed/e.txt'), 'World', 'All', true)).error, undefined);
      assert.equal((await sb.execute(`cat ${at('ed/e.txt')}`)).output, 'Bye All, All');
      assert.ok((await sb.edit(at('ed/e.txt'), 'absent', 'x')).error);
    });

    test('ls: absolute paths, directories marked, hidden files, empty and missing directories', async () => {
      await sb.write(at('li/file.txt'), 'x');
      await sb.write(at('li/.hidden'), 'x');
      await sb.execute(`mkdir -p ${at('li/subdir')} ${at('li-empty')}`);
      const r = await sb.ls(at('li'));
      assert.equal(r.error, undefined);
      const byPath = new Map((r.files ?? []).map((f) => [f.path.replace(/\/$/, ''), f.is_dir]));
      assert.deepEqual([...byPath.keys()].sort(), [at('li/.hidden'), at('li/file.txt'), at('li/subdir')]);
      assert.equal(byPath.get(at('li/subdir')), true);
      assert.equal(byPath.get(at('li/file.txt')), false);
      assert.deepEqual((await sb.ls(at('li-empty'))).files, []);
      assert.deepEqual((await sb.ls(at('li-none'))).files ?? [], []);
    });

    test('grep: literal matches with line numbers, a glob filter', async () => {
      await sb.write(at('gr/fruits.txt'), 'apple\nbanana\napple\nPrice: $100 [a-z]*');
      await sb.write(at('gr/sub/x.py'), 'apple');
      const r = await sb.grep('apple', at('gr'));
      assert.equal(r.error, undefined);
      assert.deepEqual(r.matches!.map((m) => [m.path, m.line]).sort(), [
        [at('gr/fruits.txt'), 1],
        [at('gr/fruits.txt'), 3],
        [at('gr/sub/x.py'), 1],
      ]);
      assert.equal((await sb.grep('[a-z]*', at('gr'))).matches!.length, 1);
      assert.deepEqual((await sb.grep('apple', at('gr'), '*.py')).matches!.map((m) => m.path), [at('gr/sub/x.py')]);
    });

    test('glob: recursive and one level', async () => {
      await sb.write(at('gl/a.ts'), '');
      await sb.write(at('gl/src/b.ts'), '');
      await sb.write(at('gl/src/c.js'), '');
      const deep = await sb.glob('**/*.ts', at('gl'));
      assert.equal(deep.error, undefined);
      assert.deepEqual(deep.files!.map((f) => f.path.replace(/^.*\/gl\//, '')).sort(), ['a.ts', 'src/b.ts']);
      assert.deepEqual((await sb.glob('*.ts', at('gl'))).files!.map((f) => f.path.replace(/^.*\/gl\//, '')), ['a.ts']);
    });

    test('delete: a file, a tree, a missing path', async () => {
      await sb.write(at('de/d/x.txt'), 'x');
      assert.equal((await sb.delete(at('de/d'))).error, undefined);
      assert.equal(existsSync(at('de/d')), false);
      assert.ok((await sb.delete(at('de/none'))).error);
    });
  });

  test('initialFiles are there once create resolves, nested ones too', async () => {
    const tmp = await JailSandbox.create({
      ...options,
      initialFiles: { [at('init/a.txt')]: 'Hello from initial file!', 'init/src/deep/b.sh': '#!/bin/sh\necho from script' },
    });
    try {
      assert.equal((await tmp.execute(`cat ${at('init/a.txt')}`)).output, 'Hello from initial file!');
      assert.equal((await tmp.execute(`sh ${at('init/src/deep/b.sh')}`)).output, 'from script\n');
      assert.match(String((await tmp.read(at('init/a.txt'))).content), /Hello from initial file!/);
    } finally {
      await tmp.close();
    }
  });

  test('JailSandboxProvider: getOrCreate creates or connects, list finds by label, delete is idempotent', async () => {
    const labels = { owner: unique('deepagents') };
    const provider = new JailSandboxProvider({ ...options, labels });
    const made = await provider.getOrCreate();
    try {
      assert.equal(made.isRunning, true);
      const again = await provider.getOrCreate({ sandboxId: made.id });
      assert.equal(again.id, made.id);
      const listed = await provider.list();
      assert.deepEqual(listed.items.map((i) => i.sandboxId), [made.id]);
      assert.equal(listed.cursor, null);
      assert.deepEqual(listed.items[0]!.metadata?.labels, labels);
    } finally {
      await provider.delete({ sandboxId: made.id });
    }
    await provider.delete({ sandboxId: made.id });
    assert.deepEqual((await provider.list()).items, []);
    await rejectsWithCode(provider.getOrCreate({ sandboxId: made.id }), 'SANDBOX_NOT_FOUND');
  });
});

describe(`deepagents ${versionOf('deepagents')} agent run (@langchain/openai ${versionOf('@langchain/openai')})`, { skip }, () => {
  test('createDeepAgent: the execute tool runs in the jail sandbox, twice, and the model gets the output', async () => {
    const backend = await JailSandbox.create(options);
    const run = new AgentRun(world, world.work);
    const model = await FakeModel.start([
      { tool: 'execute', args: { command: run.first } },
      { tool: 'execute', args: { command: run.second } },
      { text: 'done' },
    ]);
    try {
      const agent = createDeepAgent({
        model: new ChatOpenAI({ model: 'fake-model', apiKey: 'sk-fake', configuration: { baseURL: model.url }, maxRetries: 0 }),
        backend,
        systemPrompt: 'You run commands.',
      });
      const out = await agent.invoke({ messages: [{ role: 'user', content: 'go' }] });
      assert.equal(out.messages.at(-1)?.content, 'done');
      assert.ok(model.tools(0).includes('execute'), `tools offered: ${model.tools(0)}`);
      assert.ok(model.requests.every((r) => r.path === '/v1/chat/completions'));
      run.check(model);
      assert.match(model.toolResults(1)[0]!, /\[Command succeeded with exit code 0\]/);
      assert.equal(readFileSync(run.file, 'utf8'), run.marker.toUpperCase(), 'written in the workdir, on the host');
    } finally {
      await model.close();
      await backend.close();
    }
  });
});
