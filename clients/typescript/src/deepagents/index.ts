/**
 * @jail/sandbox/deepagents: a jail sandbox as the sandbox backend of LangChain's deepagents.
 *
 * ```ts
 * import { createDeepAgent } from 'deepagents';
 * import { JailSandbox } from '@jail/sandbox/deepagents';
 * const backend = await JailSandbox.create({ workdir: '/path/to/project' });
 * const agent = createDeepAgent({ model, backend });
 * // …
 * await backend.close();
 * ```
 *
 * `execute` runs each command with `/bin/sh -c` in one persistent sandbox (files and
 * background processes stay between calls); `uploadFiles` and `downloadFiles` are jail's file
 * routes, run inside the sandbox. The file tools deepagents builds on those (ls, read, grep,
 * glob, edit, delete) are BaseSandbox's, as for every deepagents sandbox.
 */

import {
  BaseSandbox,
  SandboxError,
  type ExecuteResponse,
  type FileDownloadResponse,
  type FileOperationError,
  type FileUploadResponse,
  type SandboxDeleteOptions,
  type SandboxGetOrCreateOptions,
  type SandboxInfo,
  type SandboxListOptions,
  type SandboxListResponse,
} from 'deepagents';
import { JailError } from '../errors.js';
import { Sandbox } from '../sandbox.js';
import type { CreateOptions } from '../types.js';

/** LocalShellBackend's defaults: a command runs at most 120 s, its output is cut at 100 000 bytes. */
const DEFAULT_TIMEOUT_MS = 120_000;
const DEFAULT_MAX_OUTPUT_BYTES = 100_000;

export interface JailSandboxOptions extends Omit<CreateOptions, 'signal'> {
  /**
   * Files written into the sandbox once it runs (path → content), as LocalShellBackend's
   * `initialFiles`; relative paths are from the sandbox's cwd.
   */
  initialFiles?: Record<string, string | Uint8Array>;
  /** `execute` output beyond this many bytes is cut, and `truncated` set (default 100 000). */
  maxOutputBytes?: number;
}

/** What deepagents calls a file error, for a JailError of a file route. */
function fileError(e: unknown): FileOperationError {
  if (!(e instanceof JailError)) throw e;
  switch (e.code) {
    case 'not_found':
      return 'file_not_found';
    case 'permission_denied':
      return 'permission_denied';
    case 'invalid_argument':
      return /is a directory/i.test(e.message) ? 'is_directory' : 'invalid_path';
    default:
      throw e;
  }
}

/** The first `max` bytes of text, not cut inside a UTF-8 character. */
function cut(text: string, max: number): { text: string; truncated: boolean } {
  const bytes = Buffer.from(text);
  if (bytes.length <= max) return { text, truncated: false };
  // stream: a character cut in two is held back, not decoded as U+FFFD.
  return { text: new TextDecoder().decode(bytes.subarray(0, max), { stream: true }), truncated: true };
}

/**
 * A deepagents sandbox backend on a persistent jail sandbox. `JailSandbox.create(opts)` makes
 * one; `JailSandbox.connect(idOrName)` takes one that runs already; `new JailSandbox(opts)`
 * followed by `initialize()` is the two-step form. `close()` removes the sandbox.
 */
export class JailSandbox extends BaseSandbox {
  private current?: Sandbox;
  private closed = false;
  private readonly options: JailSandboxOptions;

  constructor(options: JailSandboxOptions = {}) {
    super();
    this.options = options;
  }

  /** Creates a sandbox (the options are `Sandbox.create`'s, durations in ms) and writes `initialFiles`. */
  static async create(options: JailSandboxOptions = {}): Promise<JailSandbox> {
    const sb = new JailSandbox(options);
    await sb.initialize();
    return sb;
  }

  /** The running sandbox with this id or name; SandboxError `SANDBOX_NOT_FOUND` when there is none. */
  static async connect(idOrName: string, options: Pick<JailSandboxOptions, 'maxOutputBytes'> = {}): Promise<JailSandbox> {
    let jail: Sandbox;
    try {
      jail = await Sandbox.get(idOrName);
    } catch (e) {
      if (e instanceof JailError && e.code === 'not_found') {
        throw new SandboxError(e.message, 'SANDBOX_NOT_FOUND', e);
      }
      throw e;
    }
    if (jail.info.state !== 'running') {
      throw new SandboxError(`jail: sandbox "${idOrName}" is ${jail.info.state}, not running`, 'SANDBOX_NOT_FOUND');
    }
    const sb = new JailSandbox(options);
    sb.current = jail;
    return sb;
  }

  /** Creates the sandbox of the constructor's options; a second call is `ALREADY_INITIALIZED`. */
  async initialize(): Promise<void> {
    if (this.current || this.closed) {
      throw new SandboxError('jail: this JailSandbox was initialized already', 'ALREADY_INITIALIZED');
    }
    const { initialFiles, maxOutputBytes: _, ...create } = this.options;
    const jail = await Sandbox.create({ ...create, timeout: create.timeout ?? DEFAULT_TIMEOUT_MS });
    try {
      for (const [path, content] of Object.entries(initialFiles ?? {})) {
        await jail.files.write(path, content);
      }
    } catch (e) {
      await jail.delete({ missingOk: true });
      throw e;
    }
    this.current = jail;
  }

  /** The jail sandbox's id ("" before `initialize`). */
  get id(): string {
    return this.current?.id ?? '';
  }

  get isRunning(): boolean {
    return this.current !== undefined && !this.closed;
  }

  /** The @jail/sandbox client of this sandbox: processes, archives, timers. */
  get jail(): Sandbox {
    if (!this.current || this.closed) {
      throw new SandboxError('jail: this JailSandbox is not running (call initialize, or it was closed)', 'NOT_INITIALIZED');
    }
    return this.current;
  }

  /**
   * Runs a shell command to completion: stdout and stderr together in the order written, the
   * exit code (124 when the sandbox's command timeout, default 120 s, ran out).
   */
  async execute(command: string): Promise<ExecuteResponse> {
    const r = await this.jail.exec(command, { mergeOutput: true });
    let { text, truncated } = cut(r.stdout + r.stderr, this.options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES);
    if (r.timedOut) text += `${text && !text.endsWith('\n') ? '\n' : ''}Error: Command timed out.`;
    return { output: text, exitCode: r.exitCode, truncated };
  }

  /** Writes each file (making its parent directories); failures are per file. */
  async uploadFiles(files: Array<[string, Uint8Array]>): Promise<FileUploadResponse[]> {
    const out: FileUploadResponse[] = [];
    for (const [path, content] of files) {
      try {
        await this.jail.files.write(path, content);
        out.push({ path, error: null });
      } catch (e) {
        out.push({ path, error: fileError(e) });
      }
    }
    return out;
  }

  /** Reads each file; failures are per file. */
  async downloadFiles(paths: string[]): Promise<FileDownloadResponse[]> {
    const out: FileDownloadResponse[] = [];
    for (const path of paths) {
      try {
        out.push({ path, content: new Uint8Array(await this.jail.files.read(path)), error: null });
      } catch (e) {
        out.push({ path, content: null, error: fileError(e) });
      }
    }
    return out;
  }

  /** Removes the sandbox: its processes and everything it kept. A second call does nothing. */
  async close(): Promise<void> {
    if (this.closed || !this.current) {
      this.closed = true;
      return;
    }
    this.closed = true;
    await this.current.delete({ missingOk: true });
  }
}

/** What a JailSandboxProvider lists of each sandbox. */
export interface JailSandboxMetadata {
  name?: string;
  state: string;
  labels: Record<string, string>;
  createdAt?: Date;
}

/**
 * deepagents' sandbox provider shape (list, getOrCreate, delete) over jail: `getOrCreate()`
 * creates with the provider's options, `getOrCreate({sandboxId})` connects to a running sandbox
 * by id or name (and fails when there is none), `delete` is idempotent. The provider's `labels`
 * mark the sandboxes it creates and select those it lists.
 */
export class JailSandboxProvider {
  constructor(private readonly options: JailSandboxOptions = {}) {}

  async list(_options: SandboxListOptions = {}): Promise<SandboxListResponse<JailSandboxMetadata>> {
    const all = await Sandbox.list({ labels: this.options.labels });
    const items: SandboxInfo<JailSandboxMetadata>[] = all.map((s) => ({
      sandboxId: s.id,
      metadata: { name: s.info.name, state: s.info.state, labels: s.info.labels, createdAt: s.info.createdAt },
    }));
    // jail answers everything in one page.
    return { items, cursor: null };
  }

  getOrCreate(options: SandboxGetOrCreateOptions = {}): Promise<JailSandbox> {
    if (options.sandboxId) return JailSandbox.connect(options.sandboxId, this.options);
    return JailSandbox.create(this.options);
  }

  async delete(options: SandboxDeleteOptions): Promise<void> {
    try {
      await (await Sandbox.get(options.sandboxId)).delete({ missingOk: true });
    } catch (e) {
      if (!(e instanceof JailError && e.code === 'not_found')) throw e;
    }
  }
}
