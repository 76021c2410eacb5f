// The unmodified e2b SDK against jail's E2B endpoint: the lifecycle, commands and files as an
// E2B user calls them, each command checked to have run inside a jail sandbox.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Sandbox, CommandExitError, TimeoutError, FileNotFoundError, AuthenticationError } from 'e2b';
import { startEndpoint } from './endpoint.mjs';

let ep;
before(async () => { ep = await startEndpoint(); });
after(async () => { await ep?.stop(); });

test('a command runs inside jail: its own pid namespace, no ~/.ssh', async () => {
  const sb = await Sandbox.create();
  try {
    assert.ok(existsSync(ep.secret), 'the planted key is on the host');
    const r = await sb.commands.run(`readlink /proc/self/ns/pid; cat ${ep.secret} 2>&1 || echo no-secret`);
    const [ns, ...rest] = r.stdout.trim().split('\n');
    assert.match(ns, /^pid:\[\d+\]$/);
    assert.notEqual(ns, ep.hostPidNS, 'the command shares the host pid namespace');
    assert.ok(rest.includes('no-secret'), `the host key was readable: ${r.stdout}`);
    assert.ok(!r.stdout.includes('host secret key'));
  } finally {
    await sb.kill();
  }
});

test('commands: exit code, stdout, stderr, env, cwd, timeout', async () => {
  const sb = await Sandbox.create({ envs: { FROM_CREATE: 'c1' } });
  try {
    const ok = await sb.commands.run('echo out; echo err >&2; echo $FROM_CREATE $FROM_RUN; pwd', { envs: { FROM_RUN: 'r1' } });
    assert.equal(ok.exitCode, 0);
    assert.equal(ok.stdout, 'out\nc1 r1\n/home/user\n');
    assert.equal(ok.stderr, 'err\n');
    await assert.rejects(sb.commands.run('echo partial; exit 3'), (e) => {
      assert.ok(e instanceof CommandExitError);
      assert.equal(e.exitCode, 3);
      assert.equal(e.stdout, 'partial\n');
      return true;
    });
    assert.equal((await sb.commands.run('pwd', { cwd: '/workspace' })).stdout, '/workspace\n');
    await assert.rejects(sb.commands.run('sleep 30; echo late', { timeoutMs: 1000 }), TimeoutError);
    // The command is killed at its timeout, not left running.
    await new Promise((r) => setTimeout(r, 500));
    assert.deepEqual((await sb.commands.list()).map((p) => p.args.at(-1)), []);
  } finally {
    await sb.kill();
  }
});

test('a background process: stdin, list, kill, wait', async () => {
  const sb = await Sandbox.create();
  try {
    let seen = '';
    const h = await sb.commands.run('while read l; do echo "got $l"; done', { background: true, stdin: true, onStdout: (d) => (seen += d) });
    await sb.commands.sendStdin(h.pid, 'one\n');
    const listed = await sb.commands.list();
    assert.deepEqual(listed.map((p) => p.pid), [h.pid]);
    assert.deepEqual(listed[0].args, ['-l', '-c', 'while read l; do echo "got $l"; done']);
    for (let i = 0; i < 600 && !seen.includes('got one'); i++) await new Promise((r) => setTimeout(r, 50));
    assert.equal(seen, 'got one\n');
    assert.equal(await h.kill(), true);
    await assert.rejects(h.wait(), (e) => e instanceof CommandExitError && e.exitCode === -1 && e.error === 'signal: killed');
    assert.equal(await sb.commands.kill(h.pid), false, 'a killed process is gone');
    assert.deepEqual(await sb.commands.list(), []);

    const wc = await sb.commands.run('wc -c', { background: true, stdin: true });
    await sb.commands.sendStdin(wc.pid, 'abcd');
    await sb.commands.closeStdin(wc.pid);
    assert.equal((await wc.wait()).stdout.trim(), '4');
  } finally {
    await sb.kill();
  }
});

test('files: write, read, list, make dir, rename, remove', async () => {
  const sb = await Sandbox.create();
  try {
    const w = await sb.files.write('notes/a.txt', 'alpha\n');
    assert.equal(w.path, '/home/user/notes/a.txt');
    await sb.files.write([{ path: '/workspace/b.txt', data: 'beta' }, { path: '/tmp/c.bin', data: new Uint8Array([0, 1, 2, 255]).buffer }]);
    assert.equal(await sb.files.read('/home/user/notes/a.txt'), 'alpha\n');
    assert.deepEqual([...(await sb.files.read('/tmp/c.bin', { format: 'bytes' }))], [0, 1, 2, 255]);
    await sb.files.write('/workspace/empty', '');
    assert.equal(await sb.files.read('/workspace/empty'), '');
    assert.equal((await sb.commands.run('cat notes/a.txt /workspace/b.txt')).stdout, 'alpha\nbeta');
    assert.deepEqual((await sb.files.list('/workspace')).map((e) => [e.name, e.type]).sort(), [['b.txt', 'file'], ['empty', 'file']]);
    assert.equal(await sb.files.makeDir('/workspace/d/e'), true);
    assert.equal(await sb.files.makeDir('/workspace/d/e'), false);
    await sb.files.rename('/workspace/b.txt', '/workspace/d/b.txt');
    assert.equal((await sb.files.getInfo('/workspace/d/b.txt')).size, 4);
    await sb.files.remove('/workspace/d');
    assert.equal(await sb.files.exists('/workspace/d'), false);
    await assert.rejects(sb.files.read('/workspace/d/b.txt'), FileNotFoundError);
  } finally {
    await sb.kill();
  }
});

test('two sandboxes at once stay apart', async () => {
  const [a, b] = await Promise.all([Sandbox.create(), Sandbox.create()]);
  try {
    await a.files.write('/home/user/mine', 'a');
    await a.commands.run('sleep 60', { background: true });
    assert.equal(await b.files.exists('/home/user/mine'), false);
    assert.deepEqual(await b.commands.list(), []);
    const ns = await Promise.all([a, b].map(async (s) => (await s.commands.run('readlink /proc/self/ns/pid; readlink /proc/self/ns/mnt')).stdout));
    assert.notEqual(ns[0], ns[1]);
  } finally {
    await Promise.all([a.kill(), b.kill()]);
  }
});

test('lifecycle: list with metadata, set timeout, info, connect, kill', async () => {
  const sb = await Sandbox.create({ metadata: { suite: 'e2b', who: 'lifecycle' }, timeoutMs: 120_000 });
  const other = await Sandbox.create({ metadata: { suite: 'e2b', who: 'other' } });
  try {
    const mine = await Sandbox.list({ query: { metadata: { who: 'lifecycle' } } }).nextItems();
    assert.deepEqual(mine.map((s) => s.sandboxId), [sb.sandboxId]);
    assert.deepEqual(mine[0].metadata, { suite: 'e2b', who: 'lifecycle' });
    const all = (await Sandbox.list({ query: { metadata: { suite: 'e2b' } } }).nextItems()).map((s) => s.sandboxId).sort();
    assert.deepEqual(all, [sb.sandboxId, other.sandboxId].sort());

    await sb.setTimeout(30_000);
    const info = await sb.getInfo();
    const left = info.endAt.getTime() - Date.now();
    assert.ok(left > 0 && left <= 30_000, `timeout set to 30 s (from 120), ${left} ms left`);
    assert.equal(info.templateId, 'base');
    assert.equal(await sb.isRunning(), true);

    const again = await Sandbox.connect(sb.sandboxId);
    assert.equal((await again.commands.run('echo again')).stdout, 'again\n');

    await sb.kill();
    assert.equal(await Sandbox.kill(sb.sandboxId), false, 'killed twice');
    assert.equal(await sb.isRunning(), false);
    await assert.rejects(sb.commands.run('true'));
    assert.deepEqual((await Sandbox.list({ query: { metadata: { suite: 'e2b' } } }).nextItems()).map((s) => s.sandboxId), [other.sandboxId]);
  } finally {
    await other.kill();
  }
});

test('pause stops its processes until connect resumes it', async () => {
  const sb = await Sandbox.create({ metadata: { suite: 'pause' } });
  try {
    // The sandbox's working directory is bound at its host path: the host reads the counter there.
    const [workdir] = readdirSync(join(ep.root, 'e2b', 'sandboxes')).map((d) => join(ep.root, 'e2b', 'sandboxes', d));
    const file = join(workdir, 'count');
    const count = () => (existsSync(file) ? readFileSync(file, 'utf8').trim() : '');
    const counter = await sb.commands.run(`i=0; while :; do i=$((i+1)); echo $i > ${file}.new; mv ${file}.new ${file}; sleep 0.05; done`, { background: true, timeoutMs: 0 });
    const changes = async (from) => {
      for (let i = 0; i < 600 && count() === from; i++) await new Promise((r) => setTimeout(r, 50));
      return count() !== from;
    };
    assert.ok(await changes(''), 'the counter never started');
    assert.equal(await sb.pause(), true);
    assert.equal(await sb.pause(), false, 'paused twice');
    const stopped = count();
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(count(), stopped, 'the counter ran on while the sandbox was paused');
    assert.equal(await sb.isRunning(), false);
    const listed = await Sandbox.list({ query: { metadata: { suite: 'pause' }, state: ['paused'] } }).nextItems();
    assert.deepEqual(listed.map((s) => [s.sandboxId, s.state]), [[sb.sandboxId, 'paused']]);
    assert.deepEqual(await Sandbox.list({ query: { metadata: { suite: 'pause' }, state: ['running'] } }).nextItems(), []);

    const again = await Sandbox.connect(sb.sandboxId);
    assert.equal(await again.isRunning(), true);
    assert.ok(await changes(stopped), 'the counter did not go on after connect');
    assert.deepEqual((await again.commands.list()).map((p) => p.pid), [counter.pid]);
    assert.equal((await again.getInfo()).state, 'running');
  } finally {
    await sb.kill();
  }
});

test('a sandbox ends at its timeout', async () => {
  const sb = await Sandbox.create({ timeoutMs: 2000 });
  assert.equal(await sb.isRunning(), true);
  for (let i = 0; i < 600 && (await sb.isRunning()); i++) await new Promise((r) => setTimeout(r, 100));
  assert.equal(await sb.isRunning(), false);
  assert.equal(await Sandbox.kill(sb.sandboxId), false);
});

test('without the API key: 401', async () => {
  await assert.rejects(Sandbox.create({ apiKey: 'e2b_' + '0'.repeat(40) }), AuthenticationError);
  const res = await fetch(`${ep.env.E2B_API_URL}/v2/sandboxes`);
  assert.equal(res.status, 401);
  assert.match((await res.json()).message, /^jail: /);
});

test('envd requests that name their sandbox by its access token only', async () => {
  const sb = await Sandbox.create();
  try {
    const api = { 'X-API-KEY': ep.env.E2B_API_KEY };
    const { envdAccessToken } = await (await fetch(`${ep.env.E2B_API_URL}/sandboxes/${sb.sandboxId}`, { headers: api })).json();
    const stat = (token) => fetch(`${ep.env.E2B_SANDBOX_URL}/filesystem.Filesystem/Stat`, {
      method: 'POST', body: JSON.stringify({ path: '/workspace' }),
      headers: { 'Content-Type': 'application/json', 'Connect-Protocol-Version': '1', 'X-Access-Token': token },
    });
    const res = await stat(envdAccessToken);
    assert.equal(res.status, 200);
    assert.equal((await res.json()).entry.type, 'FILE_TYPE_DIRECTORY');
    assert.equal((await stat('0'.repeat(40))).status, 401);
  } finally {
    await sb.kill();
  }
});

test('unsupported calls say what jail does not do', async () => {
  await assert.rejects(Sandbox.create({ network: { denyOut: ['10.0.0.0/8'] } }), /jail: network.denyOut "10.0.0.0\/8": jail denies every destination but the allowed hosts/);
  const sb = await Sandbox.create();
  try {
    await assert.rejects(sb.files.watchDir('/home/user', () => {}), /jail: this E2B endpoint does not support watching directories/);
    await assert.rejects(sb.createSnapshot(), /jail: this E2B endpoint does not support snapshots/);
    const presigned = await fetch(await sb.downloadUrl('/home/user/x', { useSignatureExpiration: 60 }));
    assert.equal(presigned.status, 400);
    assert.match((await presigned.json()).message, /jail: this E2B endpoint does not support presigned file URLs/);
  } finally {
    await sb.kill();
  }
});
