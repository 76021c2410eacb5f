// Starts `jail serve --e2b 127.0.0.1:0` (the jail binary JAIL_BIN names, jail-e2b beside it) in a
// directory of its own, with a home of its own holding a planted ~/.ssh key, and puts the
// environment it prints into process.env, where the E2B SDK reads it.
import { spawn } from 'node:child_process';
import { mkdtempSync, mkdirSync, writeFileSync, rmSync, readlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const jailBin = process.env.JAIL_BIN || 'jail';

export async function startEndpoint() {
  const root = mkdtempSync(join(tmpdir(), 'jail-e2b-test-'));
  const home = join(root, 'home');
  mkdirSync(join(home, '.ssh'), { recursive: true, mode: 0o700 });
  const secret = join(home, '.ssh', 'id_ed25519');
  writeFileSync(secret, 'host secret key\n', { mode: 0o600 });
  const child = spawn(jailBin, ['serve', '--e2b', '127.0.0.1:0', '--e2b-dir', join(root, 'e2b')], {
    env: { ...process.env, HOME: home, XDG_STATE_HOME: join(home, '.local/state') },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const env = await new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      if (out.includes('E2B_DEBUG=')) resolve(Object.fromEntries(out.trim().split('\n').map((l) => l.split(/=(.*)/s).slice(0, 2))));
    });
    child.on('exit', (code) => reject(new Error(`jail serve --e2b exited ${code}: ${stderr}`)));
  });
  Object.assign(process.env, env);
  return {
    env, home, secret, root,
    hostPidNS: readlinkSync('/proc/self/ns/pid'),
    stderr: () => stderr,
    async stop() {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
      rmSync(root, { recursive: true, force: true });
    },
  };
}
