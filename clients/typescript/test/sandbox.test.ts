// @jail/sandbox against the real jail binary, without a daemon: jail create --json, then each
// sandbox's own socket.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { JailError, Sandbox, type CreateOptions } from '@jail/sandbox';
import { eventually, holders, hostProcessesWith, unique, World } from './world.js';

const world = new World();
const skip = world.skip();

function create(opts: CreateOptions = {}): Promise<Sandbox> {
  return Sandbox.create({ workdir: world.work, read: [world.outer], ...opts });
}

async function rejectsWith(p: Promise<unknown>, code: string): Promise<JailError> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof JailError, `not a JailError: ${e}`);
    assert.equal(e.code, code, e.message);
    assert.match(e.message, /^jail: /);
    return e;
  }
  assert.fail(`no ${code} error`);
}

after(() => {
  const left = world.close();
  assert.deepEqual(left, [], 'sandboxes left behind');
});

describe('a sandbox', { skip }, () => {
  let sb: Sandbox;
  before(async () => {
    sb = await create();
  });
  after(async () => {
    await sb.delete({ missingOk: true });
  });

  test('exec: exit code, stdout, stderr', async () => {
    const r = await sb.exec('echo out; echo err >&2; exit 3');
    assert.deepEqual([r.exitCode, r.stdout, r.stderr, r.timedOut], [3, 'out\n', 'err\n', false]);
    assert.equal((await sb.exec(['printf', '%s|', 'a b', 'c'])).stdout, 'a b|c|');
  });

  test('exec streams to callbacks as output comes', async () => {
    const seen: Array<[string, string]> = [];
    const r = await sb.exec('for i in 1 2 3; do echo $i; echo e$i >&2; sleep 0.05; done', {
      onStdout: (d) => seen.push(['out', d]),
      onStderr: (d) => seen.push(['err', d]),
    });
    assert.equal(seen.filter(([k]) => k === 'out').map(([, d]) => d).join(''), '1\n2\n3\n');
    assert.equal(seen.filter(([k]) => k === 'err').map(([, d]) => d).join(''), 'e1\ne2\ne3\n');
    assert.ok(seen.length >= 6, 'as it came, not once at the end');
    assert.equal(r.stdout, '1\n2\n3\n');
  });

  test('exec timeout: 124 and timedOut', async () => {
    const r = await sb.exec(['sleep', '30'], { timeout: 300 });
    assert.deepEqual([r.exitCode, r.timedOut], [124, true]);
  });

  test('exec cwd, env and input', async () => {
    const r = await sb.exec('pwd; echo $GREETING; cat', { cwd: '/tmp', env: { GREETING: 'hi' }, input: 'from stdin' });
    assert.equal(r.stdout, '/tmp\nhi\nfrom stdin');
  });

  test('exec errors carry the code and jail\'s message', async () => {
    const e = await rejectsWith(sb.exec(['no-such-command-here']), 'invalid_argument');
    assert.match(e.message, /^jail: exec no-such-command-here/);
    assert.equal(e.status, 400);
  });

  test('aborting an exec kills its command', async () => {
    const marker = unique('jail-ts');
    const ac = new AbortController();
    const running = sb.exec(`echo go; sleep 1000; : ${marker}`, { signal: ac.signal, onStdout: () => ac.abort() });
    await assert.rejects(running, { name: 'AbortError' });
    assert.ok(await eventually(() => hostProcessesWith(marker).length === 0));
    const pre = AbortSignal.abort();
    await assert.rejects(sb.exec('true', { signal: pre }), { name: 'AbortError' });
  });

  test('execs run concurrently', async () => {
    const rs = await Promise.all([0, 1, 2, 3].map((i) => sb.exec(`sleep 0.2; echo ${i}`)));
    assert.deepEqual(rs.map((r) => r.stdout), ['0\n', '1\n', '2\n', '3\n']);
  });

  test('a file written by one exec is read by the next', async () => {
    assert.equal((await sb.exec('echo kept > /tmp/note; echo home > ~/h')).exitCode, 0);
    assert.equal((await sb.exec('cat /tmp/note ~/h')).stdout, 'kept\nhome\n');
    assert.equal(await sb.files.readText('/tmp/note'), 'kept\n');
  });

  test('commands run inside jail', async () => {
    const inside = (await sb.exec('readlink /proc/self/ns/pid')).stdout.trim();
    assert.match(inside, /^pid:\[/);
    assert.notEqual(inside, readlinkSync('/proc/self/ns/pid'));
    // The home holding ~/.ssh sits in a directory the sandbox may read: what hides ~/.ssh is
    // the sandbox's private home, not a missing grant.
    assert.ok(existsSync(world.secret));
    const r = await sb.exec(`cat ${world.outer}/visible; echo HOME=$HOME; ls -A ~ | grep ssh; cat ~/.ssh/id_test`);
    assert.equal(r.stdout, `granted\nHOME=${world.home}\n`);
    assert.notEqual(r.exitCode, 0);
    assert.equal(await sb.files.exists('~/.ssh'), false);
    assert.equal(await sb.files.exists(world.secret), false);
  });

  test('files: write, read, list, stat, mkdir, move, remove', async () => {
    const f = sb.files;
    assert.equal((await f.write('/tmp/d/a.txt', 'hello')).size, 5);
    const bin = Uint8Array.from({ length: 256 }, (_, i) => i);
    await f.write('/tmp/d/b.bin', bin, { mode: 0o600 });
    assert.deepEqual(new Uint8Array(await f.read('/tmp/d/b.bin')), bin);
    assert.equal((await f.read('/tmp/d/a.txt', { offset: 1, length: 3 })).toString(), 'ell');
    assert.deepEqual(
      (await f.list('/tmp/d')).map((e) => [e.name, e.type, e.size]),
      [['a.txt', 'file', 5], ['b.bin', 'file', 256]],
    );
    assert.equal((await f.stat('/tmp/d/b.bin')).mode, 0o600);
    assert.equal((await f.mkdir('/tmp/d/sub')).type, 'dir');
    await rejectsWith(f.mkdir('/tmp/d/sub'), 'already_exists');
    await f.mkdir('/tmp/d/sub', { parents: true });
    assert.equal((await f.move('/tmp/d/a.txt', '/tmp/d/sub/a.txt')).path, '/tmp/d/sub/a.txt');
    await f.remove('/tmp/d/b.bin');
    assert.equal(await f.exists('/tmp/d/b.bin'), false);
    await rejectsWith(f.read('/tmp/d/b.bin'), 'not_found');
    await rejectsWith(f.remove('/tmp/d'), 'invalid_argument');
    await f.remove('/tmp/d', { recursive: true });
    await f.remove('/tmp/d', { missingOk: true });
    await rejectsWith(f.write('/usr/jail-client-test', 'x'), 'permission_denied');
    await f.write('data.txt', 'in workdir');
    assert.equal((await sb.exec('cat data.txt')).stdout, 'in workdir');
    assert.equal(readFileSync(join(world.work, 'data.txt'), 'utf8'), 'in workdir');
  });

  test('tar archives round trip', async () => {
    const host = mkdtempSync(join(world.root, 'tar-'));
    mkdirSync(join(host, 'proj', 'sub'), { recursive: true });
    writeFileSync(join(host, 'proj', 'a.txt'), 'A');
    writeFileSync(join(host, 'proj', 'sub', 'b.txt'), 'BB');
    const tar = execFileSync('tar', ['-cf', '-', '-C', host, 'proj']);
    const res = await sb.files.writeArchive('/tmp/in', tar);
    assert.equal(res.bytes, 3);
    assert.equal((await sb.exec('cat /tmp/in/proj/a.txt /tmp/in/proj/sub/b.txt')).stdout, 'ABB');
    const out = await sb.files.readArchive('/tmp/in/proj');
    const back = join(host, 'back');
    mkdirSync(back);
    execFileSync('tar', ['-xf', '-', '-C', back], { input: out });
    assert.equal(readFileSync(join(back, 'proj', 'a.txt'), 'utf8'), 'A');
    assert.equal(readFileSync(join(back, 'proj', 'sub', 'b.txt'), 'utf8'), 'BB');
  });

  test('a background process started, then killed', async () => {
    const marker = unique('jail-ts');
    const p = await sb.processes.start(`echo ready; sleep 1000; : ${marker}`);
    assert.equal(p.info.running, true);
    assert.equal((await p.output({ wait: 5000 })).stdout.toString(), 'ready\n');
    assert.ok(await eventually(() => hostProcessesWith(marker).length > 0));
    assert.ok((await sb.processes.list({ running: true })).some((q) => q.pid === p.pid));
    assert.equal(await p.kill(), true);
    const done = await p.wait({ timeout: 10000 });
    assert.deepEqual([done.running, done.exitCode, done.signal], [false, 137, 'KILL']);
    assert.equal(await p.kill(), false, 'ended: nothing to kill');
    assert.ok(await eventually(() => hostProcessesWith(marker).length === 0));
  });

  test('a process\'s stdin, its output by offset, attach', async () => {
    const p = await sb.processes.start(['sh', '-c', 'echo start; cat; echo end >&2'], { stdin: true });
    const first = await p.output({ wait: 5000 });
    assert.equal(first.stdout.toString(), 'start\n');
    await p.sendStdin('one ');
    await p.sendStdin(new TextEncoder().encode('two'));
    await p.closeStdin();
    assert.equal((await p.wait({ timeout: 10000 })).exitCode, 0);
    const rest = await p.output({ stdout: first.nextStdout, stderr: first.nextStderr });
    assert.deepEqual([rest.stdout.toString(), rest.stderr.toString(), rest.running, rest.exit?.exitCode], ['one two', 'end\n', false, 0]);
    const got: string[] = [];
    const again = await p.attach({ onStdout: (d) => got.push(d) });
    assert.deepEqual([again.stdout, got.join(''), again.exitCode], ['start\none two', 'start\none two', 0]);
    assert.equal((await sb.processes.connect(p.pid)).info.exitCode, 0);
    await p.remove();
    await rejectsWith(sb.processes.get(p.pid), 'not_found');
  });

  test('delete without force is refused while a command runs', async () => {
    const other = await create();
    await other.processes.start(['sleep', '1000']);
    await rejectsWith(other.delete({ force: false }), 'failed_precondition');
    await other.delete();
  });
});

describe('sandboxes', { skip }, () => {
  test('list, get by name, labels, timers; delete leaves nothing', async () => {
    const name = unique('ts');
    const marker = unique('jail-ts');
    const sb = await create({ name, labels: { suite: 'typescript', name }, idleTimeout: 600_000, ttl: 3_600_000, env: { FROM_CREATE: 'yes' }, tmpfs: ['/scratch'], cache: ['none'] });
    try {
      assert.match(sb.id, /^jb_[0-9a-f]{12}$/);
      assert.deepEqual([sb.name, sb.info.state, sb.info.labels.suite], [name, 'running', 'typescript']);
      assert.deepEqual([sb.info.idleTimeout, sb.info.ttl], [600_000, 3_600_000]);
      assert.equal((await sb.exec('echo $FROM_CREATE; touch /scratch/x && echo scratch')).stdout, 'yes\nscratch\n');
      const other = await create();
      try {
        assert.deepEqual((await Sandbox.list({ labels: { name } })).map((s) => s.id), [sb.id]);
        const all = (await Sandbox.list()).map((s) => s.id);
        assert.ok(all.includes(sb.id) && all.includes(other.id));
      } finally {
        await other.delete();
      }
      assert.equal((await Sandbox.get(name)).id, sb.id);
      assert.equal((await Sandbox.get(sb.id)).name, name);
      await rejectsWith(create({ name }), 'already_exists');
      assert.equal((await sb.setTimeout(1_800_000)).ttl, 1_800_000);
      await sb.update({ labels: { suite: 'changed' } });
      assert.deepEqual((await sb.refresh()).labels, { suite: 'changed' });
      await sb.processes.start(`sleep 1000; : ${marker}`);
      assert.ok(await eventually(() => hostProcessesWith(marker).length > 0));
      assert.equal((await sb.refresh()).processes.length, 1);
    } finally {
      await sb.delete();
    }
    assert.ok(!world.sandboxDirs().includes(sb.id));
    assert.ok(!existsSync(join(world.runtime, sb.id)));
    assert.throws(() => lstatSync(join(world.runtime, 'names', name)), { code: 'ENOENT' });
    assert.deepEqual(hostProcessesWith(marker), []);
    // Its keeper, and the API handler that answered the delete, which exits once the
    // connection is closed.
    assert.ok(await eventually(() => hostProcessesWith(sb.id).length === 0));
    await rejectsWith(Sandbox.get(name), 'not_found');
    await rejectsWith(sb.exec('true'), 'not_found');
    await sb.delete({ missingOk: true });
  });

  test('a dead sandbox is listed through jail ls and pruned', async () => {
    // Its keeper killed, it answers on no socket.
    const sb = await create({ labels: { fate: 'dead' } });
    const lock = join(world.runtime, sb.id, 'lock');
    const keepers = holders(lock);
    assert.equal(keepers.length, 1, String(keepers));
    process.kill(keepers[0]!, 'SIGKILL');
    assert.ok(await eventually(() => holders(lock).length === 0));
    await rejectsWith(sb.exec('true'), 'not_found');
    assert.deepEqual((await Sandbox.list({ labels: { fate: 'dead' } })).map((s) => [s.id, s.info.state]), [[sb.id, 'dead']]);
    assert.deepEqual(await Sandbox.list({ labels: { fate: 'alive' } }), []);
    assert.deepEqual(await Sandbox.prune(), [sb.id]);
    assert.deepEqual(await Sandbox.list(), []);
    assert.ok(!world.sandboxDirs().includes(sb.id));
  });

  test('create errors', async () => {
    await rejectsWith(create({ profile: 'no-such-profile-here' }), 'invalid_argument');
    await rejectsWith(create({ workdir: join(world.root, 'no-such-dir') }), 'invalid_argument');
    await rejectsWith(create({ write: ['relative/dir'] }), 'invalid_argument');
    await rejectsWith(Sandbox.get('no-such-sandbox'), 'not_found');
    await rejectsWith(Sandbox.get('jb_000000000000'), 'not_found');
  });
});
