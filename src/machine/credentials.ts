import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { svcHome } from '../lib/paths.js';

/** What `svc login` stores in `~/.svc/credentials.json` (0600), read by every command, the gate client and the client SDK. */
export const storedCredentialsSchema = z.object({
  apiKey: z.string().min(1).max(4096),
  workspaceId: z.string().min(1).max(128).optional(),
  controlPlaneUrl: z.url({ protocol: /^https?$/ }).optional(),
  memberId: z.string().max(128).optional(),
});
export type StoredCredentials = z.infer<typeof storedCredentialsSchema>;

export function credentialsPath(env: NodeJS.ProcessEnv = process.env): string {
  return join(svcHome(env), 'credentials.json');
}

/** The stored credentials, or null when there are none (or they do not read). */
export function readStoredCredentials(env: NodeJS.ProcessEnv = process.env): StoredCredentials | null {
  try {
    const parsed = storedCredentialsSchema.safeParse(JSON.parse(readFileSync(credentialsPath(env), 'utf8')));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}
