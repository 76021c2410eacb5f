// HTTP/1.1 over a unix socket with Node's http module. Each request opens its own connection
// and closes it: a sandbox's socket costs a connect, and no connection stays open to hold off
// its idle timer.

import * as http from 'node:http';
import { JailError, fromBody } from './errors.js';

const USER_AGENT = 'jail-sandbox-typescript/0.1';

export type Query = Record<string, string | number | boolean | string[] | undefined | null>;

export interface Call {
  method: string;
  path: string;
  query?: Query;
  body?: Uint8Array | string;
  contentType?: string;
  signal?: AbortSignal;
}

/** The request target: undefined values are left out, a list repeats its key. */
export function target(path: string, query?: Query): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query ?? {})) {
    for (const v of Array.isArray(value) ? value : [value]) {
      if (v === undefined || v === null || v === false) continue;
      params.append(key, v === true ? '1' : String(v));
    }
  }
  const q = params.toString();
  return q ? `${path}?${q}` : path;
}

function send(socketPath: string, call: Call): Promise<http.IncomingMessage> {
  return new Promise((resolve, reject) => {
    const headers: http.OutgoingHttpHeaders = { Host: 'jail', Connection: 'close', 'User-Agent': USER_AGENT };
    const body = typeof call.body === 'string' ? Buffer.from(call.body) : call.body;
    if (body !== undefined || ['POST', 'PUT', 'PATCH'].includes(call.method)) {
      headers['Content-Length'] = body?.byteLength ?? 0;
      if (call.contentType) headers['Content-Type'] = call.contentType;
    }
    const req = http.request({ socketPath, method: call.method, path: target(call.path, call.query), headers, agent: false, signal: call.signal });
    req.on('response', resolve);
    req.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'ECONNRESET' && !call.signal?.aborted) {
        // jail closes a connection it refuses without a byte: another user's socket, or a
        // process inside a sandbox.
        reject(new JailError('permission_denied', 'jail: the API socket closed the connection without an answer (is it another user\'s, or is this process inside a sandbox?)'));
        return;
      }
      reject(call.signal?.aborted ? call.signal.reason : err);
    });
    req.end(body);
  });
}

/**
 * Sends a request to the first socket that accepts it — a stale daemon socket (its server
 * killed) or a sandbox just removed is passed over — and returns the answer of a success;
 * an error answer is thrown as its JailError.
 */
export async function open(candidates: string[], noneAnswered: () => Error, call: Call): Promise<http.IncomingMessage> {
  for (const socketPath of candidates) {
    let res: http.IncomingMessage;
    try {
      res = await send(socketPath, call);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'ECONNREFUSED' || code === 'ENOENT') continue;
      throw e;
    }
    if ((res.statusCode ?? 0) >= 300) {
      throw fromBody(await readAll(res, call.signal), res.statusCode ?? 0);
    }
    return res;
  }
  throw noneAnswered();
}

/** The whole body of an answer. */
export async function readAll(res: http.IncomingMessage, signal?: AbortSignal): Promise<Buffer> {
  const chunks: Buffer[] = [];
  try {
    for await (const chunk of res) chunks.push(chunk as Buffer);
  } catch (e) {
    throw signal?.aborted ? signal.reason : e;
  }
  return Buffer.concat(chunks);
}

/** The lines of a streamed answer (application/x-ndjson), as they come. */
export async function* lines(res: http.IncomingMessage, signal?: AbortSignal): AsyncGenerator<string> {
  let buf = Buffer.alloc(0);
  try {
    for await (const chunk of res) {
      buf = Buffer.concat([buf, chunk as Buffer]);
      let nl: number;
      while ((nl = buf.indexOf(0x0a)) >= 0) {
        yield buf.subarray(0, nl).toString('utf8');
        buf = buf.subarray(nl + 1);
      }
    }
  } catch (e) {
    throw signal?.aborted ? signal.reason : e;
  }
  if (buf.length) yield buf.toString('utf8');
}

export async function json<T>(candidates: string[], noneAnswered: () => Error, call: Call): Promise<T | undefined> {
  const res = await open(candidates, noneAnswered, call);
  const body = await readAll(res, call.signal);
  if (res.statusCode === 204 || body.length === 0) return undefined;
  return JSON.parse(body.toString('utf8')) as T;
}

export async function bytes(candidates: string[], noneAnswered: () => Error, call: Call): Promise<Buffer> {
  const res = await open(candidates, noneAnswered, call);
  return readAll(res, call.signal);
}
