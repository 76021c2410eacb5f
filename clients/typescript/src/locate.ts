// Where jail's API answers (docs/api.md, Transport): the per-user runtime directory, `jail
// serve`'s socket in it, each sandbox's own socket, and the jail binary that creates sandboxes
// when no daemon runs.

import { accessSync, constants, existsSync, lstatSync, readdirSync } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';
import { JailError } from './errors.js';

export const ID_PREFIX = 'jb_';
const DAEMON_SOCKET = 'jail.sock';
const SANDBOX_SOCKET = 'api.sock';

function uid(): number {
  return process.getuid ? process.getuid() : -1;
}

/** $JAIL_RUNTIME_DIR, else $XDG_RUNTIME_DIR/jail, else $TMPDIR/jail-UID, as jail decides. */
export function runtimeDir(): string {
  const env = process.env;
  if (env.JAIL_RUNTIME_DIR) return env.JAIL_RUNTIME_DIR;
  if (env.XDG_RUNTIME_DIR && isAbsolute(env.XDG_RUNTIME_DIR)) return join(env.XDG_RUNTIME_DIR, 'jail');
  return join(env.TMPDIR || '/tmp', `jail-${uid()}`);
}

/**
 * Whether the runtime directory exists; refuses it, as jail does, unless it is a directory of
 * this user's that no one else may enter: a socket in someone else's directory could be theirs.
 */
function privateDir(dir: string): boolean {
  let st;
  try {
    st = lstatSync(dir);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw e;
  }
  const mode = st.mode & 0o777;
  if (!st.isDirectory()) {
    throw new JailError('failed_precondition', `jail: runtime directory ${dir}: not a directory (a symlink?); remove it`);
  }
  if (st.uid !== uid()) {
    throw new JailError('failed_precondition', `jail: runtime directory ${dir}: owned by uid ${st.uid}, not you; remove it or set XDG_RUNTIME_DIR`);
  }
  if (mode & 0o077) {
    throw new JailError('failed_precondition', `jail: runtime directory ${dir}: mode ${mode.toString(8).padStart(4, '0')} lets others in; chmod 700 it`);
  }
  return true;
}

/** jail serve's socket, as a list of candidates: empty when it does not exist. */
export function daemonSockets(): string[] {
  const dir = runtimeDir();
  const path = join(dir, DAEMON_SOCKET);
  return privateDir(dir) && existsSync(path) ? [path] : [];
}

/**
 * The sockets to try for one sandbox: the daemon's, then the sandbox's own (`known`, its
 * object's `socket`, else the one its id names).
 */
export function sandboxSockets(idOrName: string, known?: string): string[] {
  let own = known;
  if (!own && idOrName.startsWith(ID_PREFIX) && !idOrName.includes('/')) {
    own = join(runtimeDir(), idOrName, SANDBOX_SOCKET);
  }
  return [...daemonSockets(), ...(own ? [own] : [])];
}

/**
 * Every socket that may answer a route not tied to one sandbox (a list, a name): the daemon's,
 * then every sandbox's own — each answers every route.
 */
export function anySockets(): string[] {
  const dir = runtimeDir();
  if (!privateDir(dir)) return [];
  const own = sandboxDirs(dir)
    .map((e) => join(dir, e, SANDBOX_SOCKET))
    .filter((p) => existsSync(p));
  return [...daemonSockets(), ...own];
}

function sandboxDirs(dir: string): string[] {
  return readdirSync(dir)
    .filter((e) => e.startsWith(ID_PREFIX))
    .sort();
}

/** Whether the runtime directory holds any sandbox, live or dead. */
export function anyRecords(): boolean {
  const dir = runtimeDir();
  return privateDir(dir) && sandboxDirs(dir).length > 0;
}

/** $JAIL_BIN, else jail on PATH. */
export function jailBinary(): string {
  if (process.env.JAIL_BIN) return process.env.JAIL_BIN;
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    const path = join(dir, 'jail');
    try {
      accessSync(path, constants.X_OK);
      return path;
    } catch {
      // not here
    }
  }
  throw new JailError('failed_precondition', 'jail: create: no jail binary on PATH (install jail, or set JAIL_BIN)');
}
