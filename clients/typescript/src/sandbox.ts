// Sandbox: one persistent jail sandbox.

import { sandboxInfo } from './convert.js';
import { goDuration } from './durations.js';
import { JailError } from './errors.js';
import { events } from './events.js';
import { Files } from './files.js';
import { json } from './http.js';
import { anyRecords, anySockets, ID_PREFIX, sandboxSockets } from './locate.js';
import { Processes } from './processes.js';
import { cli, create } from './create.js';
import { commandBody, noSandbox, Target } from './target.js';
import { Workspace } from './workspace.js';
import type { CreateOptions, ExecOptions, ExecResult, ListOptions, SandboxInfo } from './types.js';

type Wire = Record<string, any>;

class NoneAnswered extends Error {}

/**
 * A persistent jail sandbox: commands and files stay between calls until `delete`. The client
 * talks to `jail serve`'s socket when it runs, else to the sandbox's own socket.
 */
export class Sandbox {
  /** The sandbox object when last fetched (`refresh` fetches it again). */
  info: SandboxInfo;
  readonly files: Files;
  readonly processes: Processes;
  /** The change set of an overlay workspace (`create({ workspace: 'overlay' })`). */
  readonly workspace: Workspace;
  private readonly t: Target;

  private constructor(info: SandboxInfo) {
    this.info = info;
    this.t = new Target(info.id, info.socket);
    this.files = new Files(this.t);
    this.processes = new Processes(this.t);
    this.workspace = new Workspace(this.t);
  }

  get id(): string {
    return this.info.id;
  }

  get name(): string | undefined {
    return this.info.name;
  }

  /**
   * Creates a sandbox from a profile (default `agent`) for `workdir` (default: the current
   * directory) and resolves once it is ready to run commands. Without a daemon it runs `jail
   * create --json` ($JAIL_BIN, else jail on PATH).
   */
  static async create(opts: CreateOptions = {}): Promise<Sandbox> {
    return new Sandbox(sandboxInfo(await create(opts)));
  }

  /** The sandbox with this id or name; `not_found` when there is none. */
  static async get(idOrName: string): Promise<Sandbox> {
    const sockets = idOrName.startsWith(ID_PREFIX) ? sandboxSockets(idOrName) : anySockets();
    const o = await json<Wire>(sockets, noSandbox(idOrName), { method: 'GET', path: `/v1/sandboxes/${encodeURIComponent(idOrName)}` });
    return new Sandbox(sandboxInfo(o!));
  }

  /** Your sandboxes (running ones, and records of ended ones), those with all `labels`. */
  static async list(opts: ListOptions = {}): Promise<Sandbox[]> {
    const query = {
      label: Object.entries(opts.labels ?? {}).map(([k, v]) => `${k}=${v}`),
      name: opts.name,
      state: opts.state?.join(','),
    };
    try {
      const o = await json<Wire>(anySockets(), () => new NoneAnswered(), { method: 'GET', path: '/v1/sandboxes', query });
      return (o!.sandboxes ?? []).map((s: Wire) => new Sandbox(sandboxInfo(s)));
    } catch (e) {
      if (!(e instanceof NoneAnswered)) throw e;
    }
    if (!anyRecords()) return [];
    // Only records of dead sandboxes are left, whose sockets answer nothing: `jail ls --json`
    // reads them, and the filter is applied here.
    const o = JSON.parse((await cli(['ls', '--json'])).toString('utf8')) as Wire;
    return (o.sandboxes ?? [])
      .map((s: Wire) => sandboxInfo(s))
      .filter(
        (i: SandboxInfo) =>
          Object.entries(opts.labels ?? {}).every(([k, v]) => i.labels[k] === v) &&
          (!opts.name || i.name === opts.name) &&
          (!opts.state || opts.state.includes(i.state as 'running')),
      )
      .map((i: SandboxInfo) => new Sandbox(i));
  }

  /** Removes the records of ended sandboxes; resolves to their ids. */
  static async prune(): Promise<string[]> {
    try {
      const o = await json<Wire>(anySockets(), () => new NoneAnswered(), { method: 'POST', path: '/v1/prune' });
      return o!.removed ?? [];
    } catch (e) {
      if (!(e instanceof NoneAnswered)) throw e;
    }
    // Nothing answers: `jail prune` finds dead sandboxes without any socket.
    return (await cli(['prune'])).toString('utf8').split(/\s+/).filter(Boolean);
  }

  /**
   * Runs a command to completion (a string runs as /bin/sh -c, an array is an argv). A timeout
   * (ms) ends it with exit code 124 and `timedOut`; `onStdout`/`onStderr` get the output as it
   * comes; aborting `signal` kills the command.
   */
  exec(cmd: string | string[], opts: ExecOptions = {}): Promise<ExecResult> {
    return events(this.t, 'POST', '/exec', { body: commandBody(cmd, opts), signal: opts.signal }, opts.onStdout, opts.onStderr);
  }

  /** Fetches the sandbox object again (with its processes). */
  async refresh(): Promise<SandboxInfo> {
    return (this.info = sandboxInfo((await this.t.json<Wire>('GET', ''))!));
  }

  /**
   * Changes the timers (ms; `ttl` counts from now, 0 removes it) or replaces the labels. The
   * policy (profile, grants, network) is fixed at create.
   */
  async update(opts: { ttl?: number; idleTimeout?: number; labels?: Record<string, string> }): Promise<SandboxInfo> {
    const body: Wire = {};
    if (opts.ttl !== undefined) body.ttl = goDuration(opts.ttl);
    if (opts.idleTimeout !== undefined) body.idle_timeout = goDuration(opts.idleTimeout);
    if (opts.labels !== undefined) body.labels = opts.labels;
    return (this.info = sandboxInfo((await this.t.json<Wire>('PATCH', '', { body }))!));
  }

  /** Removes the sandbox `ms` from now (E2B's setTimeout); 0 removes the deadline. */
  setTimeout(ms: number): Promise<SandboxInfo> {
    return this.update({ ttl: ms });
  }

  /**
   * Removes the sandbox: every process, file and socket of it. `force: false` refuses
   * (`failed_precondition`) while a command of exec or start still runs.
   */
  async delete(opts: { force?: boolean; missingOk?: boolean } = {}): Promise<void> {
    try {
      await this.t.json('DELETE', '', { query: { force: opts.force ?? true } });
    } catch (e) {
      if (!(opts.missingOk && e instanceof JailError && e.code === 'not_found')) throw e;
    }
  }
}
