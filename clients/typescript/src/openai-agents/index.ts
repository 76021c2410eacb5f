/**
 * @jail/sandbox/openai-agents: jail as a sandbox client of the OpenAI Agents SDK.
 *
 * ```ts
 * import { Runner } from '@openai/agents';
 * import { JailSandboxClient } from '@jail/sandbox/openai-agents';
 * const runner = new Runner({ sandbox: { client: new JailSandboxClient({ allowHosts: ['pypi.org'] }) } });
 * ```
 *
 * Each session is a persistent jail sandbox whose workspace root (the manifest's, default
 * /workspace) is a private tmpfs at that very path, or — when the root is the `workdir` or
 * inside it — the host directory itself. Commands, the file tools and apply_patch all see the
 * root where the SDK says it is; nothing is rewritten.
 */

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative, resolve, isAbsolute } from 'node:path';
import { UserError } from '@openai/agents';
import {
  normalizeExposedPort,
  normalizeSandboxClientCreateArgs,
  SandboxLifecycleError,
  SandboxUnsupportedFeatureError,
  type Manifest,
  type SandboxClient,
  type SandboxClientCreateArgs,
  type SandboxClientResumeOptions,
} from '@openai/agents/sandbox';
import { deserializeManifest, rehydratePersistedEnvironmentForRuntime, sanitizeEnvironmentForPersistence, serializeManifest } from '@openai/agents-core/sandbox/internal';
import { JailError } from '../errors.js';
import { Sandbox } from '../sandbox.js';
import type { CreateOptions } from '../types.js';
import { assertSupported, materializeManifest } from './manifest.js';
import { JailSandboxSession, type JailSandboxSessionState } from './session.js';

export { JailSandboxSession, type JailSandboxSessionState } from './session.js';

/**
 * `Sandbox.create`'s options (durations in ms) — `cwd` is the manifest's root and `env` the
 * manifest's environment — plus the shell commands run with and the ports resolveExposedPort
 * may answer for. Without a `workdir` the client makes an empty private one (removed with the
 * sandbox), so that nothing of the current directory is granted.
 */
export type JailSandboxClientOptions = Omit<CreateOptions, 'cwd' | 'env' | 'signal'> & {
  /** The shell of exec_command when the model names none (default: bash for a login shell, else sh). */
  defaultShell?: string;
  /** Ports resolveExposedPort answers for (with `network: 'host'`); default: any. */
  exposedPorts?: number[];
};

const PROVIDER = 'JailSandboxClient';

function within(dir: string, path: string): boolean {
  const rel = relative(resolve(dir), path);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

export class JailSandboxClient implements SandboxClient<JailSandboxClientOptions, JailSandboxSessionState> {
  readonly backendId = 'jail';

  constructor(private readonly options: JailSandboxClientOptions = {}) {}

  async create(args?: SandboxClientCreateArgs<JailSandboxClientOptions> | Manifest, manifestOptions?: JailSandboxClientOptions): Promise<JailSandboxSession> {
    const a = normalizeSandboxClientCreateArgs(args, manifestOptions);
    if (a.snapshot) {
      throw new SandboxUnsupportedFeatureError(`${PROVIDER} keeps no snapshots: persistWorkspace and hydrateWorkspace move the workspace as a tar.`, { provider: PROVIDER, feature: 'snapshot' });
    }
    const manifest = a.manifest;
    assertSupported(manifest);
    const { defaultShell, exposedPorts, ...create } = { ...this.options, ...a.options };
    const ownedWorkdir = create.workdir ? undefined : await mkdtemp(join(tmpdir(), 'jail-openai-agents-'));
    const workdir = create.workdir ?? ownedWorkdir!;
    const root = manifest.root;
    const grants = manifest.extraPathGrants;
    let jail: Sandbox;
    try {
      jail = await Sandbox.create({
        ...create,
        workdir,
        cwd: root,
        // The root is the sandbox's own, unless it is the host directory the user granted.
        tmpfs: [...(create.tmpfs ?? []), ...(within(workdir, root) ? [] : [root])],
        read: [...(create.read ?? []), ...grants.filter((g) => g.readOnly).map((g) => g.path)],
        write: [...(create.write ?? []), ...grants.filter((g) => !g.readOnly).map((g) => g.path)],
      });
    } catch (e) {
      if (ownedWorkdir) await rm(ownedWorkdir, { recursive: true, force: true });
      throw e;
    }
    const session = new JailSandboxSession({
      jail,
      ownedWorkdir,
      defaultShell,
      archiveLimits: a.archiveLimits,
      state: {
        manifest,
        environment: await manifest.resolveEnvironment(),
        jailId: jail.id,
        owned: true,
        configuredExposedPorts: [...new Set((exposedPorts ?? []).map(normalizeExposedPort))],
      },
    });
    try {
      await jail.files.mkdir(root, { parents: true });
      await materializeManifest(jail, manifest);
    } catch (e) {
      await session.close();
      throw e;
    }
    return session;
  }

  /** Removes the sandbox of a session state (nothing when it is gone already). */
  async delete(state: JailSandboxSessionState): Promise<void> {
    try {
      await (await Sandbox.get(state.jailId)).delete({ missingOk: true });
    } catch (e) {
      if (!(e instanceof JailError && e.code === 'not_found')) throw e;
    }
  }

  /** A session on the sandbox a state names, which must still run: jail keeps no snapshots to restore. */
  async resume(state: JailSandboxSessionState, options: SandboxClientResumeOptions<JailSandboxClientOptions> = {}): Promise<JailSandboxSession> {
    let jail: Sandbox;
    try {
      jail = await Sandbox.get(state.jailId);
    } catch (e) {
      if (!(e instanceof JailError && e.code === 'not_found')) throw e;
      throw new SandboxLifecycleError(`${PROVIDER}: sandbox ${state.jailId} is gone; start a new session`, { provider: PROVIDER, jailId: state.jailId });
    }
    if (jail.info.state !== 'running') {
      throw new SandboxLifecycleError(`${PROVIDER}: sandbox ${state.jailId} is ${jail.info.state}; start a new session`, { provider: PROVIDER, jailId: state.jailId });
    }
    const clientOptions = { ...this.options, ...options.clientOptions };
    return new JailSandboxSession({ jail, state, defaultShell: clientOptions.defaultShell, archiveLimits: options.archiveLimits });
  }

  async serializeSessionState(state: JailSandboxSessionState): Promise<Record<string, unknown>> {
    return {
      manifest: serializeManifest(state.manifest),
      environment: sanitizeEnvironmentForPersistence(state),
      jailId: state.jailId,
      owned: state.owned,
      configuredExposedPorts: state.configuredExposedPorts,
      exposedPorts: state.exposedPorts ?? null,
    };
  }

  async deserializeSessionState(o: Record<string, unknown>): Promise<JailSandboxSessionState> {
    if (typeof o.jailId !== 'string') throw new UserError(`${PROVIDER}: a session state without a jailId`);
    const manifest = deserializeManifest(o.manifest as Record<string, unknown>);
    const persisted = (o.environment ?? {}) as Record<string, string>;
    // As the SDK's own providers do: variables the manifest does not name are kept as they
    // were, the manifest's are resolved again.
    const runtime = Object.fromEntries(Object.entries(persisted).filter(([k]) => !(k in manifest.environment)));
    return {
      manifest,
      environment: { ...runtime, ...(await rehydratePersistedEnvironmentForRuntime(manifest, persisted)) },
      jailId: o.jailId,
      owned: Boolean(o.owned),
      configuredExposedPorts: Array.isArray(o.configuredExposedPorts) ? o.configuredExposedPorts.map(Number) : [],
      exposedPorts: (o.exposedPorts ?? undefined) as JailSandboxSessionState['exposedPorts'],
    };
  }
}
