// @jail/sandbox with jail serve running: everything goes through its socket, and a socket it
// left behind when killed is passed over.

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { Sandbox } from '@jail/sandbox';
import { stop, unique, World } from './world.js';

const world = new World();
const skip = world.skip();

after(() => {
  assert.deepEqual(world.close(), [], 'sandboxes left behind');
});

test('through jail serve', { skip }, async () => {
  const server = await world.serve();
  let sb: Sandbox | undefined;
  try {
    // No jail binary for the client: only the daemon can create.
    process.env.JAIL_BIN = join(world.root, 'no-such-jail');
    const name = unique('d');
    sb = await Sandbox.create({ workdir: world.work, name });
    assert.equal((await sb.exec('echo via daemon')).stdout, 'via daemon\n');
    assert.equal((await Sandbox.get(name)).id, sb.id);
    assert.ok((await Sandbox.list()).some((s) => s.id === sb!.id));
    await stop(server);
    // jail.sock may remain, answering nothing: the sandbox's own socket answers.
    assert.equal((await Sandbox.get(name)).id, sb.id);
    assert.equal((await sb.exec('echo direct')).stdout, 'direct\n');
  } finally {
    process.env.JAIL_BIN = world.binary;
    await stop(server);
    await sb?.delete({ missingOk: true });
  }
  assert.ok(!world.sandboxDirs().includes(sb.id));
});
