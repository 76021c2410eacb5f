// An exec stream (exec, attach) read to its exit event.

import { milliseconds } from './durations.js';
import { JailError, fromObject } from './errors.js';
import { lines } from './http.js';
import type { Request, Target } from './target.js';
import type { ExecResult } from './types.js';

/** Collects one output stream, handing each piece to its callback as it comes. */
class Collected {
  private readonly decoder = new TextDecoder('utf-8');
  text = '';

  constructor(private readonly callback?: (data: string) => void) {}

  add(data: Uint8Array, end = false): void {
    const piece = this.decoder.decode(data, { stream: !end });
    this.text += piece;
    if (piece && this.callback) this.callback(piece);
  }
}

export async function events(
  t: Target,
  method: string,
  suffix: string,
  r: Request,
  onStdout?: (data: string) => void,
  onStderr?: (data: string) => void,
): Promise<ExecResult> {
  const res = await t.stream(method, suffix, r);
  // Aborting ends the connection, which is what kills an exec's command.
  const abort = () => res.destroy();
  r.signal?.addEventListener('abort', abort, { once: true });
  try {
    const out = new Collected(onStdout);
    const err = new Collected(onStderr);
    let pid: number | undefined;
    for await (const line of lines(res, r.signal)) {
      if (!line.trim()) continue;
      const ev = JSON.parse(line) as Record<string, any>;
      switch (ev.event) {
        case 'start':
          pid = ev.pid;
          break;
        case 'stdout':
        case 'output':
          out.add(Buffer.from(ev.data ?? '', 'base64'));
          break;
        case 'stderr':
          err.add(Buffer.from(ev.data ?? '', 'base64'));
          break;
        case 'error':
          throw fromObject(ev.error);
        case 'exit':
          out.add(new Uint8Array(), true);
          err.add(new Uint8Array(), true);
          return {
            exitCode: ev.exit_code ?? 0,
            stdout: out.text,
            stderr: err.text,
            timedOut: !!ev.timed_out,
            signal: ev.signal ?? null,
            pid,
            duration: milliseconds(ev.duration),
          };
      }
    }
    r.signal?.throwIfAborted();
    throw new JailError('internal', 'jail: exec: the stream ended without an exit event (the sandbox was removed?)');
  } finally {
    r.signal?.removeEventListener('abort', abort);
    res.destroy();
  }
}
