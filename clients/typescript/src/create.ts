// Creating a sandbox: through jail serve when it answers, else by running `jail create --json`
// in the workdir (the sandbox's keeper then answers on the sandbox's own socket).

import { spawn } from 'node:child_process';
import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { goDuration } from './durations.js';
import { JailError, fromObject } from './errors.js';
import { json } from './http.js';
import { daemonSockets, jailBinary } from './locate.js';
import type { CreateOptions } from './types.js';

type Wire = Record<string, any>;

/** POST /v1/sandboxes's body. */
export function createRequest(o: CreateOptions): Wire {
  const req: Wire = { workdir: resolve(o.workdir ?? process.cwd()) };
  if (o.profile) req.profile = o.profile;
  if (o.cwd) req.cwd = o.cwd;
  if (o.workspace) req.workspace = o.workspace;
  if (o.name) req.name = o.name;
  const grants: Wire = {};
  for (const key of ['read', 'write', 'hide', 'tmpfs'] as const) {
    for (const path of o[key] ?? []) {
      // jail serve refuses these and `jail create` would take them from the workdir: refused
      // here, so a create means the same with a daemon and without.
      if (!/^[/~$]/.test(path)) {
        throw new JailError('invalid_argument', `jail: grant "${path}": paths are absolute (or start with ~ or a variable)`);
      }
    }
    if (o[key]?.length) grants[key] = [...o[key]!];
  }
  if (Object.keys(grants).length) req.grants = grants;
  const network: Wire = {};
  if (o.network) network.mode = o.network;
  if (o.allowHosts?.length) network.allow_hosts = [...o.allowHosts];
  if (o.allowPrivate) network.allow_private = true;
  if (Object.keys(network).length) req.network = network;
  if (o.env && Object.keys(o.env).length) req.env = { ...o.env };
  if (o.cache?.length) req.cache = [...o.cache];
  if (o.labels && Object.keys(o.labels).length) req.labels = { ...o.labels };
  if (o.timeout) req.timeout = goDuration(o.timeout);
  if (o.idleTimeout) req.idle_timeout = goDuration(o.idleTimeout);
  if (o.ttl) req.ttl = goDuration(o.ttl);
  return req;
}

function sortedPairs(m: Record<string, string> | undefined): string[] {
  return Object.entries(m ?? {})
    .map(([k, v]) => `${k}=${v}`)
    .sort();
}

/**
 * The arguments of `jail create --json` for a create request: one flag for each field, as
 * docs/api.md's table has them (and as `jail serve` turns the request into them).
 */
export function createArgs(req: Wire): string[] {
  const args = ['create', '--json'];
  const flag = (name: string, value: string) => args.push(`--${name}=${value}`);
  if (req.profile) flag('profile', req.profile);
  if (req.cwd) flag('cwd', req.cwd);
  const grants: Wire = req.grants ?? {};
  for (const [key, name] of [['read', 'ro'], ['write', 'rw'], ['hide', 'hide'], ['tmpfs', 'tmpfs']] as const) {
    for (const p of grants[key] ?? []) flag(name, p);
  }
  const net: Wire = req.network ?? {};
  if (net.mode) flag('net', net.mode);
  for (const h of net.allow_hosts ?? []) flag('allow-host', h);
  if (net.allow_private) args.push('--allow-private');
  for (const kv of sortedPairs(req.env)) flag('env', kv);
  if (req.cache?.length) flag('cache', req.cache.join(','));
  for (const [key, name] of [['timeout', 'timeout'], ['idle_timeout', 'idle-timeout'], ['ttl', 'ttl']] as const) {
    if (req[key]) flag(name, req[key]);
  }
  if (req.workspace) flag('workspace', req.workspace);
  if (req.name) flag('name', req.name);
  for (const kv of sortedPairs(req.labels)) flag('label', kv);
  return args;
}

class NoDaemon extends Error {}

interface Ran {
  code: number | null;
  stdout: Buffer;
  stderr: Buffer;
}

/** Runs jail's binary; a missing or unusable one is said as jail would. */
function run(argv: string[], cwd: string | undefined, signal?: AbortSignal): Promise<Ran> {
  return new Promise((done, fail) => {
    const child = spawn(argv[0]!, argv.slice(1), { cwd, stdio: ['ignore', 'pipe', 'pipe'], signal });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.on('data', (b: Buffer) => err.push(b));
    child.on('error', (e: NodeJS.ErrnoException) => {
      if (e.code === 'ENOENT' || e.code === 'EACCES') {
        fail(new JailError('failed_precondition', `jail: ${argv[1]}: ${argv[0]}: ${e.code === 'ENOENT' ? 'no such file' : 'not executable'} (install jail, or set JAIL_BIN)`));
      } else {
        fail(signal?.aborted ? signal.reason : e);
      }
    });
    child.on('close', (code) => done({ code, stdout: Buffer.concat(out), stderr: Buffer.concat(err) }));
  });
}

/** jail's own error line (its last on stderr) of a command that failed. */
function failure(r: Ran, what: string): JailError {
  const last = r.stderr.toString('utf8').trim().split('\n').pop();
  return new JailError('internal', last || `jail: ${what} exited with status ${r.code}`);
}

/** Runs jail with args and resolves to what it printed. */
export async function cli(args: string[]): Promise<Buffer> {
  const r = await run([jailBinary(), ...args], undefined);
  if (r.code !== 0) throw failure(r, args[0]!);
  return r.stdout;
}

/** Creates a sandbox and answers its object. */
export async function create(o: CreateOptions): Promise<Wire> {
  const req = createRequest(o);
  try {
    const body = JSON.stringify(req);
    return (await json<Wire>(daemonSockets(), () => new NoDaemon(), { method: 'POST', path: '/v1/sandboxes', body, contentType: 'application/json', signal: o.signal }))!;
  } catch (e) {
    if (!(e instanceof NoDaemon)) throw e;
  }
  // Checked here: spawn says ENOENT of the binary for a missing cwd too.
  if (!statSync(req.workdir, { throwIfNoEntry: false })?.isDirectory()) {
    throw new JailError('invalid_argument', `jail: create: workdir ${req.workdir}: no such directory`);
  }
  const r = await run([jailBinary(), ...createArgs(req)], req.workdir, o.signal);
  let obj: Wire | undefined;
  try {
    obj = JSON.parse(r.stdout.toString('utf8'));
  } catch {
    obj = undefined;
  }
  if (r.code === 0 && obj?.id) return obj;
  if (obj?.error) throw fromObject(obj.error);
  throw failure(r, 'create');
}
