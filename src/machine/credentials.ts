import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { join } from 'node:path';
import { z } from 'zod';
import { svcHome } from '../lib/paths.js';

/** What `svc login` stores in `~/.svc/credentials.json` (0600), read by every command, the gate client and the client SDK. */
export const storedCredentialsSchema = z.object({
  apiKey: z.string().min(1).max(4096),
  workspaceId: z.string().min(1).max(128).optional(),
  controlPlaneUrl: z.url({ protocol: /^https?$/ }).optional(),
  memberId: z.string().max(128).optional(),
  email: z.string().max(320).optional(),
  role: z.string().max(32).optional(),
  /** The key `svc login` created for this machine (from an e-mail and password): revoked by `svc logout`. */
  keyId: z.string().max(128).optional(),
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

/** Stores the credentials (0600, written atomically; the folder 0700). */
export async function writeStoredCredentials(credentials: StoredCredentials, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const file = credentialsPath(env);
  await mkdir(dirname(file), { recursive: true, mode: 0o700 });
  const temp = `${file}.${randomBytes(4).toString('hex')}.tmp`;
  await writeFile(temp, `${JSON.stringify(storedCredentialsSchema.parse(credentials), null, 2)}\n`, { mode: 0o600 });
  await rename(temp, file);
  return file;
}

export async function deleteStoredCredentials(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  await rm(credentialsPath(env), { force: true });
}
