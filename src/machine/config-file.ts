import { randomBytes } from 'node:crypto';
import { copyFile, mkdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { ConfigError } from '../lib/errors.js';

export type JsonObject = Record<string, unknown>;

/** A harness's JSON config file as read: null when it does not exist. */
export async function readJsonConfig(file: string): Promise<JsonObject | null> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new ConfigError(`cannot read ${file}: ${(err as Error).message}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new ConfigError(`${file} is not valid JSON (${(err as Error).message}); it was left as it is`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new ConfigError(`${file} does not hold a JSON object; it was left as it is`);
  return parsed as JsonObject;
}

/** The backup kept of a config file before svc first changes it. */
export const backupPath = (file: string): string => `${file}.svc-backup`;

/**
 * Writes a config file atomically (a temporary file renamed over it, with the original's mode),
 * after keeping a backup of the original the first time svc changes it.
 */
export async function writeJsonConfig(file: string, value: JsonObject): Promise<void> {
  let mode = 0o600;
  try {
    mode = (await stat(file)).mode & 0o777;
    await copyFile(file, backupPath(file), 1 /* COPYFILE_EXCL: an existing backup is the oldest original */).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'EEXIST') throw err;
    });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    await mkdir(dirname(file), { recursive: true });
  }
  const temp = `${file}.${randomBytes(4).toString('hex')}.tmp`;
  await writeFile(temp, `${JSON.stringify(value, null, 2)}\n`, { mode });
  await rename(temp, file);
}

/**
 * Writes back a config file svc changed earlier. When it now holds exactly what the backup holds
 * (the user changed nothing else meanwhile), the backup itself is put back, byte for byte, and is
 * gone; otherwise the file is written and the backup kept.
 */
export async function restoreJsonConfig(file: string, value: JsonObject): Promise<void> {
  const backup = backupPath(file);
  const original = await readJsonConfig(backup).catch(() => null);
  if (original !== null && JSON.stringify(original) === JSON.stringify(value)) {
    await rename(backup, file);
    return;
  }
  await writeJsonConfig(file, value);
}
