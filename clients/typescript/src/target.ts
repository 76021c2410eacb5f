// Where one sandbox's routes go, and the request of its commands.

import type { IncomingMessage } from 'node:http';
import { goDuration } from './durations.js';
import { JailError } from './errors.js';
import { bytes, json, open, type Query } from './http.js';
import { sandboxSockets } from './locate.js';
import type { CommandOptions, StartOptions } from './types.js';

export function noSandbox(idOrName: string): () => JailError {
  return () => new JailError('not_found', `jail: sandbox "${idOrName}": no such sandbox (no socket of it answers)`, 404);
}

export interface Request {
  query?: Query;
  body?: unknown;
  signal?: AbortSignal;
}

/**
 * One sandbox's routes. They name it by id, so a name given later to another sandbox cannot
 * redirect them; they go to the daemon's socket, else to the sandbox's own.
 */
export class Target {
  constructor(
    readonly id: string,
    readonly socket?: string,
  ) {}

  private call(method: string, suffix: string, r: Request, raw?: { body: Uint8Array; contentType: string }) {
    const jsonBody = r.body === undefined ? undefined : JSON.stringify(r.body);
    return {
      sockets: sandboxSockets(this.id, this.socket),
      gone: noSandbox(this.id),
      call: {
        method,
        path: `/v1/sandboxes/${encodeURIComponent(this.id)}${suffix}`,
        query: r.query,
        body: raw ? raw.body : jsonBody,
        contentType: raw ? raw.contentType : jsonBody === undefined ? undefined : 'application/json',
        signal: r.signal,
      },
    };
  }

  /** A route answering JSON (undefined for 204). */
  json<T>(method: string, suffix: string, r: Request = {}): Promise<T | undefined> {
    const c = this.call(method, suffix, r);
    return json<T>(c.sockets, c.gone, c.call);
  }

  /** A route answering raw bytes (a file, a tar stream). */
  bytes(method: string, suffix: string, r: Request = {}): Promise<Buffer> {
    const c = this.call(method, suffix, r);
    return bytes(c.sockets, c.gone, c.call);
  }

  /** A route taking raw bytes and answering JSON. */
  upload<T>(method: string, suffix: string, body: Uint8Array, contentType: string, r: Request = {}): Promise<T | undefined> {
    const c = this.call(method, suffix, r, { body, contentType });
    return json<T>(c.sockets, c.gone, c.call);
  }

  /** A streamed route: the answer, to be read as it comes. */
  stream(method: string, suffix: string, r: Request = {}): Promise<IncomingMessage> {
    const c = this.call(method, suffix, r);
    return open(c.sockets, c.gone, c.call);
  }
}

/** The request of exec and of a process's start: a string runs as /bin/sh -c, an array is an argv. */
export function commandBody(cmd: string | string[], o: CommandOptions & StartOptions = {}): Record<string, unknown> {
  const body: Record<string, unknown> = typeof cmd === 'string' ? { shell: cmd } : { cmd: [...cmd] };
  if (o.cwd) body.cwd = o.cwd;
  if (o.env) body.env = o.env;
  if (o.timeout) body.timeout = goDuration(o.timeout);
  if (o.stdin) body.stdin = 'pipe';
  if (o.input !== undefined) body.input = Buffer.from(o.input).toString('base64');
  if (o.tty) body.tty = { cols: o.tty.cols, rows: o.tty.rows };
  if (o.mergeOutput) body.merge_output = true;
  return body;
}

/** What a write takes: text (UTF-8) or bytes. */
export function toBytes(data: string | Uint8Array | ArrayBuffer): Uint8Array {
  if (typeof data === 'string') return Buffer.from(data);
  return data instanceof Uint8Array ? data : new Uint8Array(data);
}
