import { ControlPlaneApi, ControlPlaneHttpError } from '../config/control-plane-api.js';
import { ConfigError } from '../lib/errors.js';
import { readStoredCredentials } from '../machine/credentials.js';

/** The control plane a command talks to: SVC_CONTROL_PLANE_URL and SVC_API_KEY, else what `svc login` stored. */
export function linkedApi(env: NodeJS.ProcessEnv): { api: ControlPlaneApi; url: string } {
  const stored = readStoredCredentials(env);
  const apiKey = env.SVC_API_KEY || stored?.apiKey;
  const url = env.SVC_CONTROL_PLANE_URL || stored?.controlPlaneUrl;
  if (!apiKey || !url) throw new ConfigError('not logged in: run svc login (or set SVC_CONTROL_PLANE_URL and SVC_API_KEY)');
  return { api: new ControlPlaneApi({ controlPlaneUrl: url, apiKey }), url };
}

/** A control-plane failure as one line: its refusal, or why it could not be reached. */
export function describeFailure(err: unknown): string {
  if (err instanceof ConfigError) return err.message;
  return err instanceof ControlPlaneHttpError ? err.message : `the control plane could not be reached: ${(err as Error).message}`;
}
