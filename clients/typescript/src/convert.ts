// The API's JSON objects into the types of types.ts.

import { milliseconds } from './durations.js';
import type { ApplyResult, Change, ChangeSet, ExitStatus, FileEntry, Held, ProcessInfo, ProcessOutput, SandboxInfo } from './types.js';

// What jail sends: read loosely, so a field a newer jail adds or leaves out breaks nothing.
type Wire = Record<string, any>;

function date(text: unknown): Date | undefined {
  return typeof text === 'string' && text ? new Date(text) : undefined;
}

function b64(text: unknown): Buffer {
  return typeof text === 'string' ? Buffer.from(text, 'base64') : Buffer.alloc(0);
}

export function sandboxInfo(o: Wire): SandboxInfo {
  const net: Wire = o.network ?? {};
  return {
    id: o.id,
    name: o.name || undefined,
    state: o.state ?? '',
    profile: o.profile,
    workdir: o.workdir,
    cwd: o.cwd,
    grants: o.grants ?? {},
    network: { mode: net.mode, allowHosts: net.allow_hosts, allowPrivate: net.allow_private },
    labels: o.labels ?? {},
    createdAt: date(o.created_at),
    lastUsedAt: date(o.last_used_at),
    expiresAt: date(o.expires_at),
    idleTimeout: milliseconds(o.idle_timeout),
    ttl: milliseconds(o.ttl),
    timeout: milliseconds(o.timeout),
    socket: o.socket,
    workspace: o.workspace,
    ended: o.ended ? { at: date(o.ended.at), reason: o.ended.reason } : undefined,
    processes: (o.processes ?? []).map(processInfo),
    raw: o,
  };
}

export function processInfo(o: Wire): ProcessInfo {
  return {
    pid: o.pid,
    cmd: o.cmd ?? [],
    cwd: o.cwd ?? undefined,
    background: o.background ?? true,
    tty: !!o.tty,
    stdin: o.stdin ?? undefined,
    running: !!o.running,
    exitCode: o.exit_code ?? null,
    signal: o.signal ?? null,
    timedOut: !!o.timed_out,
    startedAt: date(o.started_at),
    endedAt: date(o.ended_at),
    stdoutBytes: o.stdout_bytes ?? 0,
    stderrBytes: o.stderr_bytes ?? 0,
  };
}

export function exitStatus(o: Wire | null | undefined): ExitStatus | null {
  return o ? { exitCode: o.exit_code ?? 0, signal: o.signal ?? null, timedOut: !!o.timed_out } : null;
}

export function processOutput(o: Wire): ProcessOutput {
  return {
    stdout: b64(o.stdout),
    stderr: b64(o.stderr),
    nextStdout: o.next_stdout ?? 0,
    nextStderr: o.next_stderr ?? 0,
    stdoutDropped: o.stdout_dropped ?? 0,
    stderrDropped: o.stderr_dropped ?? 0,
    running: !!o.running,
    exit: exitStatus(o.exit),
  };
}

export function fileEntry(o: Wire): FileEntry {
  return {
    name: o.name ?? '',
    path: o.path,
    type: o.type ?? 'other',
    size: o.size ?? 0,
    mode: parseInt(o.mode ?? '0', 8),
    mtime: date(o.mtime),
    symlinkTarget: o.symlink_target ?? undefined,
  };
}

export function change(o: Wire): Change {
  return o.from ? { status: o.status, path: o.path, from: o.from } : { status: o.status, path: o.path };
}

export function held(o: Wire): Held {
  return o.allow ? { path: o.path, reason: o.reason ?? '', allow: o.allow } : { path: o.path, reason: o.reason ?? '' };
}

export function changeSet(o: Wire): ChangeSet {
  return { id: o.id, tree: o.tree ?? '', live: !!o.live, changes: (o.changes ?? []).map(change), conflicts: (o.conflicts ?? []).map(held) };
}

export function applyResult(o: Wire): ApplyResult {
  return { written: (o.written ?? []).map(change), removed: !!o.removed };
}
