import { spawnSync } from 'node:child_process';

/**
 * `svc exec --sandbox`: the command runs confined. Two kinds:
 * - `oci` (the seed's default): `docker run` / `podman run` of `--sandbox-image` with the work dir
 *   mounted, memory, CPU and process limits, host networking so the local proxy is reachable.
 * - `bwrap` (bubblewrap, Debian's `bubblewrap` package): the host's root read-only, the work dir and
 *   a private /tmp writable, fresh PID, IPC and UTS namespaces, `--die-with-parent`; the network is
 *   shared (the agent must reach the proxy on 127.0.0.1) and memory, CPU and process limits are not
 *   applied (bubblewrap has none).
 * Without a kind, `oci` when a runtime is installed, else `bwrap`.
 */

export const SANDBOX_KINDS = ['oci', 'bwrap'] as const;
export type SandboxKind = (typeof SANDBOX_KINDS)[number];

export interface SandboxOptions {
  readonly kind: SandboxKind | 'auto';
  readonly image: string;
  readonly memory: string;
  readonly cpus: number;
  readonly pids: number;
}

const has = (program: string) => spawnSync('sh', ['-c', `command -v ${program}`], { stdio: 'ignore' }).status === 0;

/** An OCI runtime that can run a container now: podman, or docker with its daemon answering. */
function ociRuntime(): string | null {
  if (has('podman')) return 'podman';
  if (has('docker') && spawnSync('docker', ['info'], { stdio: 'ignore', timeout: 5000 }).status === 0) return 'docker';
  return null;
}

/** The kind that will run, or why none can. */
export function resolveSandbox(kind: SandboxOptions['kind']): { kind: SandboxKind; runtime: string } | { problem: string } {
  const oci = ociRuntime();
  if (kind === 'oci' || (kind === 'auto' && oci !== null)) {
    return oci === null ? { problem: 'no OCI runtime can run a container here (podman, or docker with its daemon running); use --sandbox bwrap' } : { kind: 'oci', runtime: oci };
  }
  return has('bwrap') ? { kind: 'bwrap', runtime: 'bwrap' } : { problem: 'bubblewrap is not installed (apt-get install bubblewrap), nor an OCI runtime' };
}

/** The argv that runs `command` in the sandbox, with `env` passed in. */
export function sandboxed(
  resolved: { kind: SandboxKind; runtime: string },
  opts: SandboxOptions,
  command: readonly string[],
  cwd: string,
  env: Readonly<Record<string, string>>,
): string[] {
  if (resolved.kind === 'bwrap') {
    return [
      'bwrap',
      '--ro-bind', '/', '/',
      '--dev', '/dev',
      '--proc', '/proc',
      '--tmpfs', '/tmp',
      '--bind', cwd, cwd,
      '--chdir', cwd,
      '--unshare-pid', '--unshare-ipc', '--unshare-uts',
      '--die-with-parent',
      '--new-session',
      '--',
      ...command,
    ];
  }
  const envFlags = Object.keys(env).flatMap((k) => ['-e', k]);
  return [
    resolved.runtime, 'run', '--rm', '-i',
    '--network', 'host',
    '--memory', opts.memory,
    '--cpus', String(opts.cpus),
    '--pids-limit', String(opts.pids),
    '-v', `${cwd}:${cwd}`,
    '-w', cwd,
    ...envFlags,
    opts.image,
    ...command,
  ];
}
