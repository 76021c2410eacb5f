import { held } from './convert.js';
import type { Held } from './types.js';

type Wire = Record<string, any>;

/** The error codes of jail's API (docs/api.md, Errors). A newer jail may send others. */
export type ErrorCode =
  | 'invalid_argument'
  | 'permission_denied'
  | 'not_found'
  | 'already_exists'
  | 'failed_precondition'
  | 'deadline_exceeded'
  | 'unimplemented'
  | 'internal';

/**
 * A failure jail reported. `code` is the API's error code, `status` the HTTP status (0 when no
 * HTTP answer was involved) and `message` jail's one-line message, as the command line prints
 * it.
 */
export class JailError extends Error {
  readonly code: ErrorCode | (string & {});
  readonly status: number;

  constructor(code: string, message: string, status = 0) {
    super(message);
    this.name = 'JailError';
    this.code = code;
    this.status = status;
  }
}

/**
 * An apply that wrote nothing (`failed_precondition`, 409): `refused` are the changes it
 * refuses (each with the `allow` class that takes it), `conflicts` those whose path changed in
 * the tree (taken with `overwrite`).
 */
export class ApplyRefusedError extends JailError {
  constructor(
    message: string,
    status: number,
    readonly refused: Held[],
    readonly conflicts: Held[],
  ) {
    super('failed_precondition', message, status);
    this.name = 'ApplyRefusedError';
  }
}

/** The error of an `{"code", "message"}` object, as answers and streams carry it. */
export function fromObject(obj: unknown, status = 0): JailError {
  const o = obj as { code?: unknown; message?: unknown } | null;
  if (o && typeof o === 'object') {
    return new JailError(String(o.code ?? 'internal'), String(o.message ?? 'jail: unknown error'), status);
  }
  return new JailError('internal', `jail: malformed error ${JSON.stringify(obj)}`, status);
}

/** The error of an answer's body, `{"error": {…}}`. */
export function fromBody(body: Buffer, status: number): JailError {
  try {
    const parsed = JSON.parse(body.toString('utf8')) as { error?: unknown; refused?: Wire[]; conflicts?: Wire[] };
    if (parsed && typeof parsed === 'object' && parsed.error) {
      const err = fromObject(parsed.error, status);
      if (err.code === 'failed_precondition' && (parsed.refused || parsed.conflicts)) {
        // An apply's 409 carries what stopped it beside the error.
        return new ApplyRefusedError(err.message, status, (parsed.refused ?? []).map(held), (parsed.conflicts ?? []).map(held));
      }
      return err;
    }
  } catch {
    // not JSON: said below
  }
  const text = body.toString('utf8').trim() || 'no body';
  return new JailError('internal', `jail: HTTP status ${status}: ${text}`, status);
}
