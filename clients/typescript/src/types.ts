// The values of jail's API as TypeScript sees them: durations in milliseconds (the API's are Go
// duration strings), times as Dates, names in camelCase.

/** How `Sandbox.create` builds a sandbox; every field is optional. */
export interface CreateOptions {
  /** Profile name or file (default `agent`). */
  profile?: string;
  /** Host directory the profile's `$CWD` means (`agent` binds it writable); default: `process.cwd()`. */
  workdir?: string;
  /** Default working directory of commands, inside (default: `workdir`). */
  cwd?: string;
  /** More grants over the profile's: read-only binds, writable binds, masked paths, private tmpfs. */
  read?: string[];
  write?: string[];
  hide?: string[];
  tmpfs?: string[];
  /** `none`, `host` or `proxy` (default: the profile's). */
  network?: 'none' | 'host' | 'proxy';
  /** Hosts the egress proxy reaches (implies `proxy`). */
  allowHosts?: string[];
  /** Allowed names may resolve to private addresses. */
  allowPrivate?: boolean;
  /** Variables set for every command. */
  env?: Record<string, string>;
  /** Tools whose caches the project keeps between sandboxes and runs, e.g. `['go', 'npm']`; `['none']` for none (default: the profile's). */
  cache?: string[];
  /** Default timeout of every command, in ms. */
  timeout?: number;
  /** `overlay`: the working directory's writes wait in the sandbox's change set (`sb.workspace`) until applied; default: the profile's (`bind`). */
  workspace?: 'bind' | 'overlay';
  /** Unique among your sandboxes; works wherever the id does. */
  name?: string;
  labels?: Record<string, string>;
  /** Remove the sandbox after this many ms without API use. */
  idleTimeout?: number;
  /** Remove the sandbox this many ms after create. */
  ttl?: number;
  signal?: AbortSignal;
}

export interface ListOptions {
  /** Only sandboxes with all these labels. */
  labels?: Record<string, string>;
  name?: string;
  state?: Array<'running' | 'exited' | 'dead'>;
}

export interface SandboxInfo {
  id: string;
  name?: string;
  /** `running`; `exited` (its last process died; the record stays); `dead` (its keeper is gone). */
  state: 'running' | 'exited' | 'dead' | (string & {});
  profile?: string;
  workdir?: string;
  cwd?: string;
  grants: { read?: string[]; write?: string[]; hide?: string[]; tmpfs?: string[] };
  network: { mode?: string; allowHosts?: string[]; allowPrivate?: boolean };
  labels: Record<string, string>;
  createdAt?: Date;
  lastUsedAt?: Date;
  expiresAt?: Date;
  /** ms */
  idleTimeout?: number;
  /** ms */
  ttl?: number;
  /** Default timeout of its commands, ms. */
  timeout?: number;
  socket?: string;
  /** `overlay` when the working directory's writes wait in the sandbox's change set. */
  workspace?: string;
  ended?: { at?: Date; reason?: string };
  /** Only from `Sandbox.get` and `refresh`. */
  processes: ProcessInfo[];
  /** The object as jail sent it: fields a newer jail adds are there. */
  raw: Record<string, unknown>;
}

export interface CommandOptions {
  /** Working directory inside (default: the sandbox's). */
  cwd?: string;
  /** Variables added to the sandbox's environment. */
  env?: Record<string, string>;
  /** Kill the command after this many ms: exit code 124, `timedOut`. */
  timeout?: number;
  /** Bytes written to stdin, which is then closed. */
  input?: string | Uint8Array;
  /** stderr goes where stdout goes, in the order written. */
  mergeOutput?: boolean;
}

export interface ExecOptions extends CommandOptions {
  /** Output as it comes (UTF-8, never split inside a character). */
  onStdout?: (data: string) => void;
  onStderr?: (data: string) => void;
  /** Aborting kills the command (its process group) and rejects with the signal's reason. */
  signal?: AbortSignal;
}

export interface StartOptions extends CommandOptions {
  /** Give the command a stdin pipe, written with `sendStdin`. */
  stdin?: boolean;
  /** A pseudo-terminal of the sandbox's own; its output comes as stdout. */
  tty?: { cols: number; rows: number };
}

export interface ExecResult {
  /** The command's own; 128+N when signal N killed it; 124 on timeout. */
  exitCode: number;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  signal: string | null;
  pid?: number;
  /** ms */
  duration?: number;
}

export interface ProcessInfo {
  /** Its pid inside the sandbox. */
  pid: number;
  cmd: string[];
  cwd?: string;
  /** False for an exec's command (listed while it runs; no kept output). */
  background: boolean;
  tty: boolean;
  stdin?: string;
  running: boolean;
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  startedAt?: Date;
  endedAt?: Date;
  stdoutBytes: number;
  stderrBytes: number;
}

export interface ExitStatus {
  exitCode: number;
  signal: string | null;
  timedOut: boolean;
}

/**
 * A background process's output from the offsets asked for (bytes: offsets count bytes). Pass
 * `nextStdout` and `nextStderr` back as the next offsets; `exit` is set once it ended and all
 * is read.
 */
export interface ProcessOutput {
  stdout: Buffer;
  stderr: Buffer;
  nextStdout: number;
  nextStderr: number;
  stdoutDropped: number;
  stderrDropped: number;
  running: boolean;
  exit: ExitStatus | null;
}

export interface OutputOptions {
  stdout?: number;
  stderr?: number;
  /** Wait up to this many ms for output past the offsets (or the end). */
  wait?: number;
  maxBytes?: number;
  signal?: AbortSignal;
}

export interface FileEntry {
  name: string;
  path: string;
  type: 'file' | 'dir' | 'symlink' | 'other';
  size: number;
  /** Permission bits, e.g. 0o644. */
  mode: number;
  mtime?: Date;
  symlinkTarget?: string;
}

/** One change of a change set: `status` is `git status --short`'s letter; `from` the old path of a rename. */
export interface Change {
  status: 'A' | 'M' | 'D' | 'R' | 'T' | (string & {});
  /** Relative to the tree. */
  path: string;
  from?: string;
}

/**
 * A change apply stops on: refused (`allow` is the class that takes it anyway) or in conflict
 * with the tree.
 */
export interface Held {
  path: string;
  reason: string;
  allow?: 'git' | 'protected' | 'autorun' | 'links' | 'special' | (string & {});
}

/**
 * What an overlay workspace's commands wrote, held back from the host's `tree`. `live`: the
 * sandbox lives and its commands still write here; `conflicts`: changes whose path changed in
 * the tree since the sandbox was created.
 */
export interface ChangeSet {
  id: string;
  tree: string;
  live: boolean;
  changes: Change[];
  conflicts: Held[];
}

export interface ApplyOptions {
  /** Only the changes at or beneath these paths (relative to the tree, or absolute inside it); default: all. */
  paths?: string[];
  /** Refused classes to take anyway: `git`, `protected`, `autorun`, `links`, `special`. */
  allow?: string[];
  /** Take conflicting changes over the tree's. */
  overwrite?: boolean;
}

/** The changes apply wrote; `removed`: the change set, applied in full after the sandbox's end, is gone. */
export interface ApplyResult {
  written: Change[];
  removed: boolean;
}
