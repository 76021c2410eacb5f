/**
 * @jail/sandbox/mastra: a jail sandbox as a Mastra workspace sandbox.
 *
 * ```ts
 * import { Workspace } from '@mastra/core/workspace';
 * import { JailSandbox } from '@jail/sandbox/mastra';
 * const workspace = new Workspace({ sandbox: new JailSandbox({ workdir: '/path/to/project' }) });
 * ```
 *
 * The id is the jail sandbox's name: a start finds the running sandbox of that name and
 * connects to it, or creates one (Mastra's id-keyed getOrCreate). `executeCommand` is jail's
 * exec; the process manager (background processes, stdin, kill) is jail's processes; stop
 * kills the background processes and keeps the sandbox and its files for the next start;
 * destroy removes it.
 */

import { randomBytes } from 'node:crypto';
import { posix } from 'node:path';
import {
  MastraSandbox,
  SandboxAbortError,
  validateSandboxFileMode,
  type CommandResult,
  type ExecuteCommandOptions,
  type MastraSandboxOptions,
  type ProviderStatus,
  type SandboxFileInput,
  type SandboxInfo,
  type SandboxNetworking,
  type SandboxStartOptions,
  type WriteFilesOptions,
} from '@mastra/core/workspace';
import { JailError } from '../errors.js';
import { Sandbox } from '../sandbox.js';
import type { CreateOptions } from '../types.js';
import { definedEnv, JailProcessManager } from './processes.js';

export { JailProcessHandle, JailProcessManager } from './processes.js';

/**
 * `Sandbox.create`'s options (durations in ms; `labels` get `mastra-sandbox-id` added) and
 * MastraSandbox's: `env` is Mastra's overlay, given to every command and process;
 * `workingDirectory` the default cwd of commands (default: the sandbox's, its workdir).
 */
export interface JailSandboxOptions extends Omit<CreateOptions, 'name' | 'env' | 'signal'>, Omit<MastraSandboxOptions, 'processes'> {
  /** The logical id, and the jail sandbox's name (default: `mastra-` and random hex). */
  id?: string;
}

/** The label that names the Mastra sandbox a jail sandbox belongs to. */
export const MASTRA_ID_LABEL = 'mastra-sandbox-id';

/** A word as /bin/sh reads it back unchanged. */
function quote(arg: string): string {
  return /^[A-Za-z0-9_./:=@%+-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}

export class JailSandbox extends MastraSandbox<Sandbox> {
  readonly id: string;
  readonly name = 'JailSandbox';
  readonly provider = 'jail';
  status: ProviderStatus = 'pending';
  declare readonly processes: JailProcessManager;
  override readonly networking: SandboxNetworking = {
    // A port is reachable from the host only when the sandbox shares the host's network.
    getPortUrl: async (port: number) => (this.status === 'running' && this.current?.info.network.mode === 'host' ? `http://127.0.0.1:${port}` : null),
  };
  private current?: Sandbox;
  private readonly createOptions: Omit<CreateOptions, 'name' | 'env' | 'signal'>;
  private readonly createdAt = new Date();

  constructor(options: JailSandboxOptions = {}) {
    const { id, env, workingDirectory, onStart, onStop, onDestroy, ...create } = options;
    super({ name: 'JailSandbox', processes: new JailProcessManager(), env, workingDirectory, onStart, onStop, onDestroy });
    this.id = id ?? `mastra-${randomBytes(6).toString('hex')}`;
    this.createOptions = create;
  }

  /** The @jail/sandbox client of the running sandbox: files, archives, timers. */
  get jail(): Sandbox {
    if (!this.current) throw new JailError('failed_precondition', `jail: sandbox "${this.id}" is not started`);
    return this.current;
  }

  /** The running sandbox of this name, if there is one (a dead record of it is removed). */
  protected override async find(): Promise<Sandbox | undefined> {
    let found: Sandbox;
    try {
      found = await Sandbox.get(this.id);
    } catch (e) {
      if (e instanceof JailError && e.code === 'not_found') return undefined;
      throw e;
    }
    if (found.info.state === 'running') return found;
    await found.delete({ missingOk: true });
    return undefined;
  }

  protected override connect(found: Sandbox): void {
    this.current = found;
  }

  protected override async create(options: SandboxStartOptions = {}): Promise<void> {
    this.current = await Sandbox.create({
      ...this.createOptions,
      name: this.id,
      labels: { ...this.createOptions.labels, [MASTRA_ID_LABEL]: this.id },
      signal: options.abortSignal,
    });
  }

  /** Kills the sandbox's background processes; the sandbox and its files stay for the next start. */
  override async stop(): Promise<void> {
    if (!this.current) return;
    for (const p of await this.current.processes.list({ running: true })) {
      if (p.background) await this.current.processes.kill(p.pid);
    }
  }

  /** Removes the sandbox: its processes, and the files it kept outside the workdir. */
  override async destroy(): Promise<void> {
    await this.current?.delete({ missingOk: true });
    this.current = undefined;
  }

  override async getInfo(): Promise<SandboxInfo> {
    const info = this.status === 'running' && this.current ? await this.current.refresh() : this.current?.info;
    return {
      id: this.id,
      name: this.name,
      provider: this.provider,
      status: this.status,
      createdAt: info?.createdAt ?? this.createdAt,
      lastUsedAt: info?.lastUsedAt,
      timeoutAt: info?.expiresAt,
      metadata: { jailId: info?.id, profile: info?.profile, workdir: info?.workdir, cwd: info?.cwd, network: info?.network.mode },
    };
  }

  override getInstructions(): string {
    const dir = this.workingDirectory ?? this.current?.info.cwd ?? this.createOptions.workdir ?? process.cwd();
    return `Commands run inside a jail sandbox on this machine (profile "${this.createOptions.profile ?? 'agent'}"): only what the profile grants is visible or writable. Working directory: "${dir}".`;
  }

  /** A path as commands see it: relative ones from the working directory. */
  resolvePath(path: string | undefined): string | undefined {
    if (path === undefined) return this.workingDirectory;
    return this.workingDirectory && !posix.isAbsolute(path) ? posix.join(this.workingDirectory, path) : path;
  }

  /**
   * Runs a command to completion (args are quoted for /bin/sh): `timeout` ms ends it with exit
   * code 124 and `timedOut`; aborting `abortSignal` kills it (exec's connection closed), and it
   * resolves as a killed process does.
   */
  override async executeCommand(command: string, args: string[] = [], options: ExecuteCommandOptions = {}): Promise<CommandResult> {
    await this.ensureRunning();
    const full = args.length ? `${command} ${args.map(quote).join(' ')}` : command;
    const started = Date.now();
    const seen = { stdout: '', stderr: '' };
    try {
      const r = await this.jail.exec(full, {
        cwd: this.resolvePath(options.cwd),
        env: definedEnv({ ...this.getEnv(), ...options.env }),
        timeout: options.timeout,
        onStdout: (d) => {
          seen.stdout += d;
          options.onStdout?.(d);
        },
        onStderr: (d) => {
          seen.stderr += d;
          options.onStderr?.(d);
        },
        signal: options.abortSignal,
      });
      const executionTimeMs = Date.now() - started;
      return { success: r.exitCode === 0, exitCode: r.exitCode, stdout: r.stdout, stderr: r.stderr, executionTimeMs, timedOut: r.timedOut, killed: r.signal !== null, command: full };
    } catch (e) {
      if (!options.abortSignal?.aborted) throw e;
      return { success: false, exitCode: 137, ...seen, executionTimeMs: Date.now() - started, killed: true, command: full };
    }
  }

  /** Writes files into the sandbox (parents made; relative paths from the working directory). */
  override async writeFiles(files: SandboxFileInput[], options: WriteFilesOptions = {}): Promise<void> {
    for (const f of files) if (f.mode !== undefined) validateSandboxFileMode(f.mode);
    await this.ensureRunning();
    for (const f of files) {
      if (options.abortSignal?.aborted) throw new SandboxAbortError('writeFiles', options.abortSignal.reason);
      await this.jail.files.write(this.resolvePath(f.path)!, f.content, { mode: f.mode });
    }
  }
}
