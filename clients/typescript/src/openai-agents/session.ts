// The OpenAI Agents SDK's SandboxSession on a jail sandbox: exec_command is a jail background
// process read back by byte offset (so a command still running after yieldTimeMs keeps going,
// and its pid is the session id write_stdin names), files and apply_patch go through jail's file
// routes, the workspace is persisted and hydrated as a tar.

import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { posix } from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { applyDiff, UserError, type Editor, type ToolOutputImage } from '@openai/agents';
import {
  normalizeExposedPort,
  recordExposedPortEndpoint,
  resolveSandboxArchiveLimits,
  SandboxArchiveError,
  SandboxExposedPortUnavailableError,
  SandboxUnsupportedFeatureError,
  validateSandboxArchiveLimits,
  WorkspacePathPolicy,
  type Entry,
  type ExecCommandArgs,
  type ExposedPortEndpoint,
  type ListDirectoryArgs,
  type Manifest,
  type MaterializeEntryArgs,
  type ReadFileArgs,
  type SandboxArchiveLimits,
  type SandboxDirectoryEntry,
  type SandboxExecResult,
  type SandboxSession,
  type SandboxSessionState,
  type ViewImageArgs,
  type WorkspaceArchiveData,
  type WorkspaceArchiveOptions,
  type WriteStdinArgs,
} from '@openai/agents/sandbox';
import {
  elapsedSeconds,
  formatExecResponse,
  imageOutputFromBytes,
  MAX_VIEW_IMAGE_BYTES,
  mergeManifestDelta,
  mergeManifestEntryDelta,
  truncateOutput,
} from '@openai/agents-core/sandbox/internal';
import { JailError } from '../errors.js';
import type { Sandbox } from '../sandbox.js';
import type { ProcessInfo } from '../types.js';
import { assertSupported, materializeEntry } from './manifest.js';
import { archiveTopName } from './tar.js';

const PROVIDER = 'JailSandboxClient';
const DEFAULT_EXEC_YIELD_TIME_MS = 10_000;
const DEFAULT_WRITE_STDIN_YIELD_TIME_MS = 250;
/** What one output request reads at most; the loop reads on until the offsets are at the end. */
const OUTPUT_CHUNK = 1 << 20;

export interface JailSandboxSessionState extends SandboxSessionState {
  manifest: Manifest;
  environment: Record<string, string>;
  /** The jail sandbox's id. */
  jailId: string;
  /** Created by the client: delete removes it (a resumed sandbox stays someone else's). */
  owned: boolean;
  /** Ports resolveExposedPort may answer for; empty: any (with host networking). */
  configuredExposedPorts: number[];
}

/** A command still running after its yield: its pid in the sandbox is the session id. */
interface Running {
  pid: number;
  tty: boolean;
  offset: number;
  decoder: StringDecoder;
}

function unsupported(feature: string, message: string): SandboxUnsupportedFeatureError {
  return new SandboxUnsupportedFeatureError(`${PROVIDER} ${message}`, { provider: PROVIDER, feature });
}

export class JailSandboxSession implements SandboxSession<JailSandboxSessionState> {
  readonly state: JailSandboxSessionState;
  /** The @jail/sandbox client of this session's sandbox. */
  readonly jail: Sandbox;
  private readonly defaultShell?: string;
  private readonly ownedWorkdir?: string;
  private archiveLimits?: SandboxArchiveLimits | null;
  private readonly sessions = new Map<number, Running>();
  private closing?: Promise<void>;

  constructor(args: {
    jail: Sandbox;
    state: JailSandboxSessionState;
    defaultShell?: string;
    archiveLimits?: SandboxArchiveLimits | null;
    /** A host directory the client made as the workdir, removed with the sandbox. */
    ownedWorkdir?: string;
  }) {
    this.jail = args.jail;
    this.state = args.state;
    this.defaultShell = args.defaultShell;
    this.ownedWorkdir = args.ownedWorkdir;
    this.setArchiveLimits(args.archiveLimits);
  }

  async running(): Promise<boolean> {
    try {
      return (await this.jail.refresh()).state === 'running';
    } catch (e) {
      if (e instanceof JailError && e.code === 'not_found') return false;
      throw e;
    }
  }

  supportsPty(): boolean {
    return true;
  }

  setArchiveLimits(limits?: SandboxArchiveLimits | null): void {
    validateSandboxArchiveLimits(limits);
    this.archiveLimits = limits;
  }

  // Paths: the SDK's own policy (workspace root and extra path grants), so that a path that
  // escapes the workspace is refused as with every provider.
  private resolve(path: string | undefined, forWrite = false) {
    if (this.closing) throw new UserError(`${PROVIDER}: the session is closed`);
    return new WorkspacePathPolicy({ root: this.state.manifest.root, extraPathGrants: this.state.manifest.extraPathGrants }).resolve(path, { forWrite });
  }

  private path(path: string | undefined, forWrite = false): string {
    return this.resolve(path, forWrite).path;
  }

  private noRunAs(runAs: string | undefined): void {
    if (runAs && runAs.trim()) throw unsupported('runAs', 'runs every command as the user who created the sandbox: runAs is not supported.');
  }

  /** The shell and its flag, as the SDK's local sandboxes choose them. */
  private shell(args: ExecCommandArgs): string[] {
    const login = args.login ?? true;
    const configured = [args.shell, this.defaultShell].find((s) => s && s.trim());
    if (configured) return [configured, login ? '-lc' : '-c'];
    // The system is granted read-only to the sandbox: the host's /bin is what it sees.
    if (login && existsSync('/bin/bash')) return ['/bin/bash', '-lc'];
    return ['/bin/sh', '-c'];
  }

  async exec(args: ExecCommandArgs): Promise<SandboxExecResult> {
    this.noRunAs(args.runAs);
    const start = Date.now();
    const tty = args.tty ?? false;
    const p = await this.jail.processes.start([...this.shell(args), args.cmd], {
      cwd: this.path(args.workdir),
      env: this.state.environment,
      // A pipe for write_stdin; with a terminal, what it writes are keystrokes.
      stdin: true,
      tty: tty ? { cols: 80, rows: 24 } : undefined,
      mergeOutput: true,
    });
    return this.collect({ pid: p.pid, tty, offset: 0, decoder: new StringDecoder('utf8') }, args.yieldTimeMs ?? DEFAULT_EXEC_YIELD_TIME_MS, args.maxOutputTokens, start);
  }

  async execCommand(args: ExecCommandArgs): Promise<string> {
    return formatExecResponse(await this.exec(args));
  }

  async writeStdin(args: WriteStdinArgs): Promise<string> {
    const r = this.sessions.get(args.sessionId);
    if (!r) {
      return formatExecResponse({ output: `write_stdin failed: session not found: ${args.sessionId}`, wallTimeSeconds: 0, exitCode: 1 });
    }
    const start = Date.now();
    let chars = args.chars ?? '';
    // Without a terminal Ctrl-C is a signal; with one the terminal turns it into one.
    if (!r.tty && chars.includes('\u0003')) {
      await this.jail.processes.signal(r.pid, 'INT');
      chars = chars.split('\u0003').join('');
    }
    if (chars) {
      try {
        await this.jail.processes.sendStdin(r.pid, chars);
      } catch (e) {
        // It has ended, or closed its stdin: what it did is in the output collected below.
        if (!(e instanceof JailError && (e.code === 'failed_precondition' || e.code === 'not_found'))) throw e;
      }
    }
    return formatExecResponse(await this.collect(r, args.yieldTimeMs ?? DEFAULT_WRITE_STDIN_YIELD_TIME_MS, args.maxOutputTokens, start));
  }

  /**
   * Waits up to yieldMs for the command to end, then reads what it wrote since the last read:
   * an ended command gives its exit code (and its record is dropped), a running one its
   * session id.
   */
  private async collect(r: Running, yieldMs: number, maxOutputTokens: number | undefined, start: number): Promise<SandboxExecResult> {
    const ended = await this.waitFor(r.pid, yieldMs);
    const text = await this.drain(r);
    const out = truncateOutput(text, maxOutputTokens);
    const result = { output: out.text, stdout: text, stderr: '', wallTimeSeconds: elapsedSeconds(start), originalTokenCount: out.originalTokenCount };
    if (!ended) {
      this.sessions.set(r.pid, r);
      return { ...result, sessionId: r.pid };
    }
    this.sessions.delete(r.pid);
    await this.jail.processes.remove(r.pid).catch(() => {});
    return { ...result, exitCode: ended.exitCode ?? 1 };
  }

  private async waitFor(pid: number, ms: number): Promise<ProcessInfo | undefined> {
    try {
      return await this.jail.processes.wait(pid, { timeout: Math.max(1, ms) });
    } catch (e) {
      if (e instanceof JailError && e.code === 'deadline_exceeded') return undefined;
      throw e;
    }
  }

  private async drain(r: Running): Promise<string> {
    let text = '';
    for (;;) {
      const o = await this.jail.processes.output(r.pid, { stdout: r.offset, maxBytes: OUTPUT_CHUNK });
      if (o.stdoutDropped) text += `[...${o.stdoutDropped} bytes of process output dropped...]\n`;
      text += r.decoder.write(o.stdout);
      r.offset = o.nextStdout;
      if (o.stdout.length < OUTPUT_CHUNK) return text;
    }
  }

  createEditor(runAs?: string): Editor {
    this.noRunAs(runAs);
    const files = this.jail.files;
    return {
      createFile: async (op) => {
        await files.write(this.path(op.path, true), applyDiff('', op.diff, 'create'));
      },
      updateFile: async (op) => {
        const from = this.path(op.path, true);
        const next = applyDiff((await files.read(from)).toString('utf8'), op.diff);
        const to = op.moveTo ? this.path(op.moveTo, true) : from;
        await files.write(to, next);
        if (to !== from) await files.remove(from);
      },
      deleteFile: async (op) => {
        await files.remove(this.path(op.path, true));
      },
    };
  }

  async readFile(args: ReadFileArgs): Promise<Uint8Array> {
    this.noRunAs(args.runAs);
    return this.jail.files.read(this.path(args.path), { length: args.maxBytes });
  }

  async listDir(args: ListDirectoryArgs): Promise<SandboxDirectoryEntry[]> {
    this.noRunAs(args.runAs);
    const resolved = this.resolve(args.path);
    const logical = resolved.workspaceRelativePath ?? resolved.path;
    return (await this.jail.files.list(resolved.path)).map((e) => ({
      name: e.name,
      path: logical ? `${logical}/${e.name}` : e.name,
      type: e.type === 'file' || e.type === 'dir' ? e.type : 'other',
    }));
  }

  async pathExists(path: string, runAs?: string): Promise<boolean> {
    this.noRunAs(runAs);
    return this.jail.files.exists(this.path(path));
  }

  async directoryExists(path: string, runAs?: string): Promise<boolean> {
    this.noRunAs(runAs);
    try {
      return (await this.jail.files.stat(this.path(path))).type === 'dir';
    } catch (e) {
      if (e instanceof JailError && e.code === 'not_found') return false;
      throw e;
    }
  }

  async viewImage(args: ViewImageArgs): Promise<ToolOutputImage> {
    this.noRunAs(args.runAs);
    const path = this.path(args.path);
    let entry;
    try {
      entry = await this.jail.files.stat(path);
    } catch (e) {
      if (e instanceof JailError && e.code === 'not_found') throw new UserError(`Image file not found: ${args.path}`);
      throw e;
    }
    if (entry.type !== 'file') throw new UserError(`Image path is not a file: ${args.path}`);
    if (entry.size > MAX_VIEW_IMAGE_BYTES) throw new UserError(`Image file exceeds the 10 MB limit: ${args.path}`);
    return imageOutputFromBytes(args.path, await this.jail.files.read(path));
  }

  /** A path given as the SDK gives it, relative to the workspace root. */
  private logical(path: string): string {
    const rel = this.resolve(path, true).workspaceRelativePath;
    if (rel === undefined) throw new UserError(`Sandbox path "${path}" must stay within ${this.state.manifest.root}.`);
    return rel;
  }

  async materializeEntry(args: MaterializeEntryArgs): Promise<void> {
    this.noRunAs(args.runAs);
    const logical = this.logical(args.path);
    await materializeEntry(this.jail, this.state.manifest.root, logical, args.entry as Entry);
    this.state.manifest = mergeManifestEntryDelta(this.state.manifest, logical, args.entry);
  }

  async applyManifest(manifest: Manifest, runAs?: string): Promise<void> {
    this.noRunAs(runAs);
    assertSupported(manifest);
    for (const [path, entry] of Object.entries(manifest.entries)) {
      await materializeEntry(this.jail, this.state.manifest.root, this.logical(path), entry);
    }
    this.state.environment = { ...this.state.environment, ...(await manifest.resolveEnvironment()) };
    this.state.manifest = mergeManifestDelta(this.state.manifest, manifest);
  }

  /** The workspace as a tar: the root's tree under its own name (`workspace/…`). */
  async persistWorkspace(): Promise<Uint8Array> {
    return this.jail.files.readArchive(this.path(undefined));
  }

  /**
   * Replaces the workspace with a tar: one persistWorkspace made (the root under its own
   * name), or one of the root's contents (`tar -C root -cf - .`, as remote providers make).
   * Extracted inside the sandbox, never following a symlink.
   */
  async hydrateWorkspace(data: WorkspaceArchiveData, options: WorkspaceArchiveOptions = {}): Promise<void> {
    const bytes = typeof data === 'string' ? new TextEncoder().encode(data) : data instanceof Uint8Array ? data : new Uint8Array(data);
    const limits = resolveSandboxArchiveLimits(options.archiveLimits === undefined ? this.archiveLimits : options.archiveLimits);
    if (limits?.maxInputBytes != null && bytes.byteLength > limits.maxInputBytes) {
      throw new SandboxArchiveError(`Workspace archive is ${bytes.byteLength} bytes, over the ${limits.maxInputBytes}-byte limit.`, { provider: PROVIDER });
    }
    const root = this.path(undefined);
    for (const e of await this.jail.files.list(root)) await this.jail.files.remove(e.path, { recursive: true });
    const top = archiveTopName(bytes);
    const base = posix.basename(root);
    const into = top === base || top?.startsWith(`${base}/`) ? posix.dirname(root) : root;
    await this.jail.files.writeArchive(into, bytes);
  }

  /** 127.0.0.1 and the port, when the sandbox shares the host's network (`network: 'host'`). */
  async resolveExposedPort(port: number): Promise<ExposedPortEndpoint> {
    const p = normalizeExposedPort(port);
    const configured = this.state.configuredExposedPorts;
    if (configured.length && !configured.includes(p)) {
      throw new SandboxExposedPortUnavailableError(`${PROVIDER} was not configured to expose port ${p}.`, { provider: PROVIDER, port: p, configuredPorts: configured });
    }
    if (this.jail.info.network.mode !== 'host') {
      throw new SandboxExposedPortUnavailableError(`${PROVIDER}: the sandbox has a network of its own (${this.jail.info.network.mode ?? 'none'}); create it with network: 'host' to reach its ports.`, { provider: PROVIDER, port: p });
    }
    return recordExposedPortEndpoint(this.state, { host: '127.0.0.1', port: p, tls: false });
  }

  /** Removes the sandbox when the client created it; a second call waits for the first. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      if (this.state.owned) await this.jail.delete({ missingOk: true });
      if (this.ownedWorkdir) await rm(this.ownedWorkdir, { recursive: true, force: true });
    })();
    return this.closing;
  }

  delete(): Promise<void> {
    return this.close();
  }
}
