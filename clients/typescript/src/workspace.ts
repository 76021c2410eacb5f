// The change set of an overlay workspace (`Sandbox.create({ workspace: 'overlay' })`): what the
// commands write in the working directory waits there, and the host's tree does not change
// until `apply`. While the sandbox lives its socket answers; after `delete` (which keeps a
// change set that holds changes) `jail serve`'s does. `not_found`: no change set.

import { applyResult, changeSet } from './convert.js';
import type { Target } from './target.js';
import type { ApplyOptions, ApplyResult, ChangeSet } from './types.js';

type Wire = Record<string, any>;

export class Workspace {
  constructor(private readonly t: Target) {}

  /** Its changes, and those in conflict with the tree. */
  async changes(): Promise<ChangeSet> {
    return changeSet((await this.t.json<Wire>('GET', '/changes'))!);
  }

  /**
   * The changes (at or beneath `paths`; default: all) as one patch in git's format, as `jail
   * diff` prints it: `git apply` reads it.
   */
  async diff(opts: { paths?: string[] } = {}): Promise<string> {
    return (await this.t.bytes('GET', '/changes/diff', { query: { path: opts.paths ?? [] } })).toString('utf8');
  }

  /**
   * Writes the changes into the tree. Every selected change is checked first: if any is refused
   * or in conflict nothing is written and it rejects with an ApplyRefusedError naming them.
   */
  async apply(opts: ApplyOptions = {}): Promise<ApplyResult> {
    const body = { paths: opts.paths ?? [], allow: opts.allow ?? [], overwrite: !!opts.overwrite };
    return applyResult((await this.t.json<Wire>('POST', '/changes/apply', { body }))!);
  }

  /** Drops the change set; `failed_precondition` while the sandbox lives (delete it first). */
  async discard(): Promise<void> {
    await this.t.json('DELETE', '/changes');
  }
}
