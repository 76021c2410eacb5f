// Mastra's process manager on jail's background processes: jail keeps each one's output outside
// the sandbox, and a handle follows it (attach) into Mastra's emitStdout/emitStderr.

import { ProcessHandle, SandboxProcessManager, type CommandResult, type ProcessInfo, type SpawnProcessOptions } from '@mastra/core/workspace';
import { JailError } from '../errors.js';
import type { ProcessHandle as JailProcess } from '../processes.js';
import type { JailSandbox } from './index.js';

/** The variables of an env overlay that are set (Mastra's overlays may hold undefined to unset). */
export function definedEnv(env: NodeJS.ProcessEnv | Record<string, string | undefined> | undefined): Record<string, string> | undefined {
  if (!env) return undefined;
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined) out[k] = v;
  return out;
}

/** One jail background process as Mastra's ProcessHandle. */
export class JailProcessHandle extends ProcessHandle {
  readonly pid: string;
  exitCode: number | undefined;
  private readonly result: Promise<CommandResult>;

  constructor(
    private readonly jail: JailProcess,
    started: number,
    options: SpawnProcessOptions = {},
  ) {
    super(options);
    this.pid = String(jail.pid);
    this.result = jail.attach({ onStdout: (d) => this.emitStdout(d), onStderr: (d) => this.emitStderr(d) }).then(
      (r) => {
        this.exitCode = r.exitCode;
        return {
          success: r.exitCode === 0,
          exitCode: r.exitCode,
          stdout: this.stdout,
          stderr: this.stderr,
          executionTimeMs: Date.now() - started,
          timedOut: r.timedOut,
          killed: r.signal !== null,
        };
      },
      (e: unknown) => {
        // The sandbox went away under it: the process is over, how is unknown.
        this.exitCode = -1;
        throw e;
      },
    );
    // A wait() nobody calls must not be an unhandled rejection.
    this.result.catch(() => {});
  }

  override async wait(): Promise<CommandResult> {
    return this.result;
  }

  /** SIGKILL to its process group; false once it has ended. */
  async kill(): Promise<boolean> {
    if (this.exitCode !== undefined) return false;
    return this.jail.kill();
  }

  async sendStdin(data: string): Promise<void> {
    if (this.exitCode !== undefined) throw new Error(`jail: process ${this.pid} has exited (code ${this.exitCode})`);
    await this.jail.sendStdin(data);
  }

  override async closeStdin(): Promise<void> {
    if (this.exitCode !== undefined) throw new Error(`jail: process ${this.pid} has exited (code ${this.exitCode})`);
    await this.jail.closeStdin();
  }
}

/**
 * Mastra's process manager for a JailSandbox: spawn starts a jail background process (its
 * stdin a pipe unless `stdinMode: 'ignore'`), list is the sandbox's, get also finds a process
 * another client started.
 */
export class JailProcessManager extends SandboxProcessManager<JailSandbox> {
  override async spawn(command: string, options: SpawnProcessOptions = {}): Promise<ProcessHandle> {
    const started = Date.now();
    const jail = await this.sandbox.jail.processes.start(command, {
      cwd: this.sandbox.resolvePath(options.cwd),
      env: definedEnv(options.env),
      timeout: options.timeout,
      stdin: options.stdinMode !== 'ignore',
    });
    const handle = new JailProcessHandle(jail, started, options);
    this._tracked.set(handle.pid, handle);
    return handle;
  }

  override async list(): Promise<ProcessInfo[]> {
    const records = await this.sandbox.jail.processes.list();
    // An exec's command is listed while it runs; it is not one of ours to manage.
    return records
      .filter((p) => p.background)
      .map((p) => ({
        pid: String(p.pid),
        command: this._tracked.get(String(p.pid))?.command ?? p.cmd.join(' '),
        running: p.running,
        exitCode: p.exitCode ?? undefined,
      }));
  }

  override async get(pid: string): Promise<ProcessHandle | undefined> {
    const tracked = this._tracked.get(pid);
    if (tracked) return tracked;
    if (!/^\d+$/.test(pid)) return undefined;
    try {
      const jail = await this.sandbox.jail.processes.connect(Number(pid));
      if (!jail.info.background) return undefined;
      const handle = new JailProcessHandle(jail, Date.now());
      this._tracked.set(pid, handle);
      return handle;
    } catch (e) {
      if (e instanceof JailError && e.code === 'not_found') return undefined;
      throw e;
    }
  }
}
