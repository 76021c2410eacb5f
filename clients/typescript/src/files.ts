// Files inside a sandbox. Every operation runs inside it, with its restrictions: paths are the
// sandbox's, relative ones from its cwd, and a symlink resolves in its root.

import { JailError } from './errors.js';
import { fileEntry } from './convert.js';
import { toBytes, type Target } from './target.js';
import type { FileEntry } from './types.js';

type Wire = Record<string, any>;
export type Data = string | Uint8Array | ArrayBuffer;

export class Files {
  constructor(private readonly t: Target) {}

  /** The file's bytes (from `offset`, at most `length` of them). */
  read(path: string, opts: { offset?: number; length?: number; signal?: AbortSignal } = {}): Promise<Buffer> {
    return this.t.bytes('GET', '/fs/file', { query: { path, offset: opts.offset, length: opts.length }, signal: opts.signal });
  }

  /** The file as UTF-8 text. */
  async readText(path: string): Promise<string> {
    return (await this.read(path)).toString('utf8');
  }

  /**
   * Writes a file (creating its parent directories; an existing file keeps its mode) and
   * returns its absolute path and size. `mode` is e.g. 0o600.
   */
  async write(path: string, data: Data, opts: { mode?: number } = {}): Promise<{ path: string; size: number }> {
    const mode = opts.mode === undefined ? undefined : opts.mode.toString(8).padStart(4, '0');
    const o = await this.t.upload<Wire>('PUT', '/fs/file', toBytes(data), 'application/octet-stream', { query: { path, mode } });
    return { path: o!.path, size: o!.size };
  }

  /** The entry of path (a symlink itself, not followed). */
  async stat(path: string): Promise<FileEntry> {
    return fileEntry((await this.t.json<Wire>('GET', '/fs/stat', { query: { path } }))!);
  }

  async exists(path: string): Promise<boolean> {
    try {
      await this.stat(path);
      return true;
    } catch (e) {
      if (e instanceof JailError && e.code === 'not_found') return false;
      throw e;
    }
  }

  /** The entries under a directory, `depth` levels deep (default 1), sorted by path. */
  async list(path = '.', opts: { depth?: number } = {}): Promise<FileEntry[]> {
    const o = await this.t.json<Wire>('GET', '/fs/list', { query: { path, depth: opts.depth } });
    return (o!.entries ?? []).map(fileEntry);
  }

  /** Makes a directory; `already_exists` when it exists, unless `parents`. */
  async mkdir(path: string, opts: { parents?: boolean; mode?: number } = {}): Promise<FileEntry> {
    const body: Wire = { path, parents: !!opts.parents };
    if (opts.mode !== undefined) body.mode = opts.mode.toString(8).padStart(4, '0');
    return fileEntry((await this.t.json<Wire>('POST', '/fs/mkdir', { body }))!);
  }

  /** rename(2): `to` is replaced. */
  async move(from: string, to: string): Promise<FileEntry> {
    return fileEntry((await this.t.json<Wire>('POST', '/fs/move', { body: { from, to } }))!);
  }

  async remove(path: string, opts: { recursive?: boolean; missingOk?: boolean } = {}): Promise<void> {
    await this.t.json('POST', '/fs/remove', { body: { path, recursive: !!opts.recursive, missing_ok: !!opts.missingOk } });
  }

  /** A tar archive of path: a directory's tree under its own name, or the one file. */
  readArchive(path: string, opts: { signal?: AbortSignal } = {}): Promise<Buffer> {
    return this.t.bytes('GET', '/fs/archive', { query: { path }, signal: opts.signal });
  }

  /**
   * Extracts a tar archive into directory (created if missing), inside the sandbox and never
   * following a symlink; returns how many files and bytes it wrote.
   */
  async writeArchive(directory: string, tar: Uint8Array | ArrayBuffer): Promise<{ files: number; bytes: number }> {
    const o = await this.t.upload<Wire>('PUT', '/fs/archive', toBytes(tar), 'application/x-tar', { query: { path: directory } });
    return { files: o!.files, bytes: o!.bytes };
  }
}
