// A manifest's entries written into a jail sandbox's workspace through jail's file routes:
// directories, files, and files and trees read from the host (local_file, local_dir). Git
// repositories, mounts, users and groups are not for jail to make: they are refused by name.

import { readdir, readFile } from 'node:fs/promises';
import { join, posix } from 'node:path';
import { permissionsForSandboxEntry, SandboxUnsupportedFeatureError, type Entry, type Manifest } from '@openai/agents/sandbox';
import type { Sandbox } from '../sandbox.js';

const PROVIDER = 'JailSandboxClient';

/** Refuses what a jail sandbox cannot hold, before anything is created. */
export function assertSupported(manifest: Manifest): void {
  if (manifest.root === '/') {
    throw new SandboxUnsupportedFeatureError(`${PROVIDER} needs a workspace root other than "/" (the default /workspace will do).`, { provider: PROVIDER, feature: 'manifest.root' });
  }
  if (manifest.users.length || manifest.groups.length) {
    throw new SandboxUnsupportedFeatureError(`${PROVIDER} does not support manifest users or groups: a jail sandbox runs as you.`, { provider: PROVIDER, feature: 'manifest.users' });
  }
  for (const grant of manifest.extraPathGrants) {
    if (grant.hostPath !== undefined && grant.hostPath !== grant.path) {
      throw new SandboxUnsupportedFeatureError(`${PROVIDER} grants host paths at their own path: omit hostPath for "${grant.path}".`, { provider: PROVIDER, feature: 'manifest.extraPathGrants.hostPath', path: grant.path });
    }
  }
  for (const item of manifest.iterEntries()) assertEntry(item.logicalPath, item.entry);
}

function assertEntry(path: string, entry: Entry): void {
  if (!['dir', 'file', 'local_file', 'local_dir'].includes(entry.type)) {
    throw new SandboxUnsupportedFeatureError(`${PROVIDER} does not support manifest entries of type "${entry.type}" ("${path}").`, { provider: PROVIDER, feature: `manifest.entries.${entry.type}`, path });
  }
}

function mode(entry: Entry): number | undefined {
  return entry.permissions === undefined ? undefined : permissionsForSandboxEntry(entry.permissions).toMode() & 0o7777;
}

/** Writes one entry at a workspace-relative path (under root). */
export async function materializeEntry(jail: Sandbox, root: string, logicalPath: string, entry: Entry): Promise<void> {
  assertEntry(logicalPath, entry);
  const path = posix.join(root, logicalPath);
  switch (entry.type) {
    case 'file':
      await jail.files.write(path, entry.content, { mode: mode(entry) });
      break;
    case 'local_file':
      await jail.files.write(path, await readFile(entry.src), { mode: mode(entry) });
      break;
    case 'local_dir':
      await copyTree(jail, entry.src, path);
      break;
    case 'dir':
      await jail.files.mkdir(path, { parents: true, mode: mode(entry) });
      for (const [name, child] of Object.entries(entry.children ?? {})) {
        await materializeEntry(jail, root, posix.join(logicalPath, name), child);
      }
      break;
  }
}

/** A host directory's files and directories into the sandbox (symlinks and others left out). */
async function copyTree(jail: Sandbox, hostDir: string, path: string): Promise<void> {
  await jail.files.mkdir(path, { parents: true });
  for (const e of await readdir(hostDir, { withFileTypes: true })) {
    if (e.isDirectory()) await copyTree(jail, join(hostDir, e.name), posix.join(path, e.name));
    else if (e.isFile()) await jail.files.write(posix.join(path, e.name), await readFile(join(hostDir, e.name)));
  }
}

/** Writes every entry of a manifest into its root. */
export async function materializeManifest(jail: Sandbox, manifest: Manifest): Promise<void> {
  for (const [logicalPath, entry] of Object.entries(manifest.entries)) {
    await materializeEntry(jail, manifest.root, logicalPath, entry);
  }
}
