// An overlay workspace's change set: listed, diffed, applied (a planted git hook refused,
// nothing written), and after delete reached through jail serve and discarded.

import assert from 'node:assert/strict';
import { execFileSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { ApplyRefusedError, JailError, Sandbox } from '@jail/sandbox';
import { stop, World } from './world.js';

const world = new World();
const skip = world.skip();

after(() => {
  assert.deepEqual(world.close(), [], 'sandboxes left behind');
});

// A profile without protections or git rules: the sandbox may plant a git hook in its overlay,
// and only apply stands between it and the host's git.
const BARE_PROFILE = `[filesystem]
read = ["/usr", "/etc", "/bin?", "/sbin?", "/lib?", "/lib64?"]
write = ["$CWD"]
tmpfs = ["/tmp", "~"]
[git]
mode = "off"
[process]
env = ["PATH"]
`;

async function rejection(p: Promise<unknown>): Promise<JailError> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof JailError, `not a JailError: ${e}`);
    return e;
  }
  assert.fail('no error');
}

test('changes, diff, apply, discard', { skip }, async () => {
  const tree = mkdtempSync(join(world.root, 'tree-'));
  execFileSync('git', ['init', '-q', tree]);
  const profile = `${tree}.toml`;
  writeFileSync(profile, BARE_PROFILE);
  const hook = join(tree, '.git', 'hooks', 'pre-commit');
  const sb = await Sandbox.create({ profile, workdir: tree, workspace: 'overlay' });
  let server: ChildProcess | undefined;
  try {
    assert.equal(sb.info.workspace, 'overlay');
    const r = await sb.exec("echo new > new.txt && echo 'touch planted' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit");
    assert.equal(r.exitCode, 0, r.stderr);
    assert.ok(!existsSync(join(tree, 'new.txt')));

    let cs = await sb.workspace.changes();
    assert.deepEqual([cs.id, cs.tree, cs.live, cs.conflicts], [sb.id, tree, true, []]);
    assert.deepEqual(
      [...cs.changes].sort((a, b) => a.path.localeCompare(b.path)),
      [
        { status: 'A', path: '.git/hooks/pre-commit' },
        { status: 'A', path: 'new.txt' },
      ],
    );
    const diff = await sb.workspace.diff({ paths: ['new.txt'] });
    assert.ok(diff.includes('+++ b/new.txt\n@@ -0,0 +1 @@\n+new\n'), diff);
    assert.ok(!diff.includes('pre-commit'), diff);

    const e = await rejection(sb.workspace.apply());
    assert.ok(e instanceof ApplyRefusedError, `not an ApplyRefusedError: ${e}`);
    assert.deepEqual([e.code, e.status, e.refused.map((h) => [h.path, h.allow]), e.conflicts], ['failed_precondition', 409, [['.git/hooks/pre-commit', 'git']], []]);
    assert.ok(!existsSync(hook) && !existsSync(join(tree, 'new.txt')), 'a refused apply wrote');

    assert.deepEqual(await sb.workspace.apply({ paths: ['new.txt'] }), { written: [{ status: 'A', path: 'new.txt' }], removed: false });
    assert.equal(readFileSync(join(tree, 'new.txt'), 'utf8'), 'new\n');
    assert.equal((await sb.exec('cat new.txt')).stdout, 'new\n'); // the sandbox sees its files still
    assert.equal((await rejection(sb.workspace.discard())).code, 'failed_precondition'); // its overlay is mounted on the change set

    await sb.delete();
    server = await world.serve();
    cs = await sb.workspace.changes();
    assert.equal(cs.live, false);
    assert.ok(cs.changes.some((c) => c.path === '.git/hooks/pre-commit'), JSON.stringify(cs));
    await sb.workspace.discard();
    assert.equal((await rejection(sb.workspace.changes())).code, 'not_found');
    assert.ok(!existsSync(hook));
  } finally {
    if (server) await stop(server);
    await sb.delete({ missingOk: true });
  }
});
