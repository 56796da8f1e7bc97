import { homedir } from 'node:os';
import { join } from 'node:path';

/** The local state folder: `~/.svc/`, or `SVC_HOME`. */
export function svcHome(env: NodeJS.ProcessEnv = process.env): string {
  return env.SVC_HOME && env.SVC_HOME.length > 0 ? env.SVC_HOME : join(homedir(), '.svc');
}
