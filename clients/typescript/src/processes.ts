// Background processes: they outlive the request that started them, and jail keeps their output
// (the last MiB of each stream) to read by offset from any connection.

import { goDuration } from './durations.js';
import { JailError } from './errors.js';
import { processInfo, processOutput } from './convert.js';
import { events } from './events.js';
import { commandBody, toBytes, type Target } from './target.js';
import type { ExecResult, OutputOptions, ProcessInfo, ProcessOutput, StartOptions } from './types.js';

type Wire = Record<string, any>;

export interface AttachOptions {
  stdout?: number;
  stderr?: number;
  onStdout?: (data: string) => void;
  onStderr?: (data: string) => void;
  /** Aborting stops following; the process keeps running. */
  signal?: AbortSignal;
}

export class Processes {
  constructor(private readonly t: Target) {}

  private path(pid: number, suffix = ''): string {
    return `/processes/${Math.trunc(pid)}${suffix}`;
  }

  /** Starts a command (a string runs as /bin/sh -c) and returns its handle once it runs. */
  async start(cmd: string | string[], opts: StartOptions = {}): Promise<ProcessHandle> {
    const o = await this.t.json<Wire>('POST', '/processes', { body: commandBody(cmd, opts) });
    return new ProcessHandle(this, processInfo(o!));
  }

  /** Running processes, and ended background ones not yet removed. */
  async list(opts: { running?: boolean } = {}): Promise<ProcessInfo[]> {
    const o = await this.t.json<Wire>('GET', '/processes', { query: { running: opts.running } });
    return (o!.processes ?? []).map(processInfo);
  }

  async get(pid: number): Promise<ProcessInfo> {
    return processInfo((await this.t.json<Wire>('GET', this.path(pid)))!);
  }

  /** A handle of a process started earlier (by this client or another). */
  async connect(pid: number): Promise<ProcessHandle> {
    return new ProcessHandle(this, await this.get(pid));
  }

  /** Output past the offsets; waits up to `wait` ms for some (or the end). */
  async output(pid: number, opts: OutputOptions = {}): Promise<ProcessOutput> {
    const query = {
      stdout: opts.stdout ?? 0,
      stderr: opts.stderr ?? 0,
      wait: opts.wait ? goDuration(opts.wait) : undefined,
      max_bytes: opts.maxBytes,
    };
    return processOutput((await this.t.json<Wire>('GET', this.path(pid, '/output'), { query, signal: opts.signal }))!);
  }

  /** Follows the output from the offsets until the process ends; resolves as exec does. */
  attach(pid: number, opts: AttachOptions = {}): Promise<ExecResult> {
    const r = { query: { stdout: opts.stdout ?? 0, stderr: opts.stderr ?? 0 }, signal: opts.signal };
    return events(this.t, 'GET', this.path(pid, '/attach'), r, opts.onStdout, opts.onStderr);
  }

  /** The record once the process has ended; `deadline_exceeded` after `timeout` ms. */
  async wait(pid: number, opts: { timeout?: number; signal?: AbortSignal } = {}): Promise<ProcessInfo> {
    const query = { timeout: opts.timeout ? goDuration(opts.timeout) : undefined };
    return processInfo((await this.t.json<Wire>('GET', this.path(pid, '/wait'), { query, signal: opts.signal }))!);
  }

  async sendStdin(pid: number, data: string | Uint8Array, opts: { close?: boolean } = {}): Promise<void> {
    await this.t.upload('POST', this.path(pid, '/stdin'), toBytes(data), 'application/octet-stream', { query: { close: opts.close } });
  }

  closeStdin(pid: number): Promise<void> {
    return this.sendStdin(pid, '', { close: true });
  }

  /** Signals the process's group (`TERM`, `INT`, `KILL`, … or a number); false when it has ended. */
  async signal(pid: number, sig: string | number = 'TERM'): Promise<boolean> {
    try {
      await this.t.json('POST', this.path(pid, '/signal'), { body: { signal: String(sig) } });
      return true;
    } catch (e) {
      if (e instanceof JailError && e.code === 'not_found') return false;
      throw e;
    }
  }

  /** SIGKILL to the process's group; false when it has ended already. */
  kill(pid: number): Promise<boolean> {
    return this.signal(pid, 'KILL');
  }

  async resize(pid: number, cols: number, rows: number): Promise<void> {
    await this.t.json('POST', this.path(pid, '/resize'), { body: { cols, rows } });
  }

  /** Kills the process if it runs and drops its record and output. */
  async remove(pid: number): Promise<void> {
    await this.t.json('DELETE', this.path(pid));
  }
}

/** One background process: `Processes`' calls with its pid. */
export class ProcessHandle {
  constructor(
    private readonly processes: Processes,
    /** The record when the handle was made (`refresh` for a newer one). */
    public info: ProcessInfo,
  ) {}

  get pid(): number {
    return this.info.pid;
  }

  async refresh(): Promise<ProcessInfo> {
    return (this.info = await this.processes.get(this.pid));
  }

  output(opts: OutputOptions = {}): Promise<ProcessOutput> {
    return this.processes.output(this.pid, opts);
  }

  attach(opts: AttachOptions = {}): Promise<ExecResult> {
    return this.processes.attach(this.pid, opts);
  }

  async wait(opts: { timeout?: number; signal?: AbortSignal } = {}): Promise<ProcessInfo> {
    return (this.info = await this.processes.wait(this.pid, opts));
  }

  sendStdin(data: string | Uint8Array, opts: { close?: boolean } = {}): Promise<void> {
    return this.processes.sendStdin(this.pid, data, opts);
  }

  closeStdin(): Promise<void> {
    return this.processes.closeStdin(this.pid);
  }

  signal(sig: string | number = 'TERM'): Promise<boolean> {
    return this.processes.signal(this.pid, sig);
  }

  kill(): Promise<boolean> {
    return this.processes.kill(this.pid);
  }

  resize(cols: number, rows: number): Promise<void> {
    return this.processes.resize(this.pid, cols, rows);
  }

  remove(): Promise<void> {
    return this.processes.remove(this.pid);
  }
}
