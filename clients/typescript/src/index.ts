/**
 * @jail/sandbox: client of jail's local API for persistent sandboxes (docs/api.md).
 *
 * ```ts
 * import { Sandbox } from '@jail/sandbox';
 * const sb = await Sandbox.create({ name: 'demo' });
 * const r = await sb.exec('echo hello');
 * console.log(r.exitCode, r.stdout);
 * await sb.delete();
 * ```
 */

export { Sandbox } from './sandbox.js';
export { Files, type Data } from './files.js';
export { Processes, ProcessHandle, type AttachOptions } from './processes.js';
export { Workspace } from './workspace.js';
export { ApplyRefusedError, JailError, type ErrorCode } from './errors.js';
export { runtimeDir } from './locate.js';
export type {
  ApplyOptions,
  ApplyResult,
  Change,
  ChangeSet,
  CommandOptions,
  CreateOptions,
  ExecOptions,
  ExecResult,
  ExitStatus,
  FileEntry,
  Held,
  ListOptions,
  OutputOptions,
  ProcessInfo,
  ProcessOutput,
  SandboxInfo,
  StartOptions,
} from './types.js';
