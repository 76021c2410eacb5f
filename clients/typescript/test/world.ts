// The tests' world: the real jail binary ($JAIL_BIN, else jail on PATH), a runtime directory of
// their own, a working directory, and a home with a ~/.ssh inside a directory the sandboxes may
// read, so that only the sandbox's private home can hide it. Each test file runs in a process
// of its own and makes its own world.

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

function findJail(): string | undefined {
  if (process.env.JAIL_BIN) return process.env.JAIL_BIN;
  return (process.env.PATH ?? '')
    .split(delimiter)
    .map((d) => join(d, 'jail'))
    .find((p) => existsSync(p));
}

export class World {
  readonly binary = findJail();
  readonly root = mkdtempSync(join(tmpdir(), 'jail-ts-'));
  readonly runtime = join(this.root, 'rt');
  readonly work = join(this.root, 'work');
  /** Granted read-only to the sandboxes. */
  readonly outer = join(this.root, 'outer');
  readonly home = join(this.outer, 'home');
  readonly secret = join(this.home, '.ssh', 'id_test');

  constructor() {
    mkdirSync(join(this.home, '.ssh'), { recursive: true });
    mkdirSync(this.work);
    writeFileSync(this.secret, 'not for sandboxes\n');
    writeFileSync(join(this.outer, 'visible'), 'granted\n');
    process.env.JAIL_RUNTIME_DIR = this.runtime;
    process.env.HOME = this.home;
    process.env.XDG_STATE_HOME = join(this.root, 'state'); // change sets go there
    if (this.binary) process.env.JAIL_BIN = this.binary;
  }

  /** Why the tests cannot run, or undefined; with JAIL_MUST_WORK=1 a missing binary fails. */
  skip(): string | undefined {
    if (this.binary) return undefined;
    if (process.env.JAIL_MUST_WORK === '1') throw new Error('no jail binary: set JAIL_BIN');
    return 'no jail binary: set JAIL_BIN';
  }

  sandboxDirs(): string[] {
    return existsSync(this.runtime) ? readdirSync(this.runtime).filter((e) => e.startsWith('jb_')).sort() : [];
  }

  /** Removes what a failed test left (then says so), and the world. */
  close(): string[] {
    const left = this.sandboxDirs();
    if (left.length && this.binary) spawnSync(this.binary, ['rm', '-f', ...left], { stdio: 'ignore' });
    rmSync(this.root, { recursive: true, force: true });
    return left;
  }

  /** Starts `jail serve` on the runtime directory's jail.sock and waits until it answers. */
  async serve(): Promise<ChildProcess> {
    const proc = spawn(this.binary!, ['serve'], { stdio: ['ignore', 'ignore', 'pipe'] });
    const path = join(this.runtime, 'jail.sock');
    for (let i = 0; i < 200; i++) {
      if (proc.exitCode !== null) throw new Error(`jail serve exited ${proc.exitCode}`);
      const ok = await new Promise<boolean>((resolve) => {
        const s = connect(path, () => {
          s.destroy();
          resolve(true);
        });
        s.on('error', () => resolve(false));
      });
      if (ok) return proc;
      await sleep(25);
    }
    await stop(proc);
    throw new Error('jail serve did not answer within 5 s');
  }
}

export async function stop(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  const ended = new Promise((resolve) => proc.once('exit', resolve));
  proc.kill('SIGTERM');
  await ended;
}

/** Pids of host processes whose command line holds marker (what a sandbox runs shows there). */
export function hostProcessesWith(marker: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`).includes(marker)) pids.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

/** Pids of processes with path open (a sandbox's keeper holds its lock file). */
export function holders(path: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${entry}/fd`);
    } catch {
      continue;
    }
    if (fds.some((fd) => {
      try {
        return readlinkSync(`/proc/${entry}/fd/${fd}`) === path;
      } catch {
        return false;
      }
    })) pids.push(Number(entry));
  }
  return pids;
}

/** Whether check() turns true within timeout ms: for effects jail finishes asynchronously. */
export async function eventually(check: () => boolean, timeout = 5000): Promise<boolean> {
  const deadline = Date.now() + timeout;
  while (Date.now() < deadline) {
    if (check()) return true;
    await sleep(20);
  }
  return check();
}

export function unique(prefix: string): string {
  return `${prefix}-${Math.random().toString(16).slice(2, 10)}`;
}
