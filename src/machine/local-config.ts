import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { ConfigError } from '../lib/errors.js';
import { svcHome } from '../lib/paths.js';

/**
 * The local settings file `.svc/config.json` (seed 002 "Local files"): the local spending cap and
 * whether the hook gate keeps pre-images of flagged file changes for `svc rollback`.
 *
 * Which file: the project's `<folder>/.svc/config.json` (the folder a command runs in, or the
 * folder a harness reports for a hook call) when it exists, else `$SVC_HOME/config.json`
 * (`~/.svc/config.json`), else the defaults. The first file found is used whole: keys are not
 * merged across files, so what a project's file says is all that applies to that project.
 */

export const DEFAULT_LOCAL_CAP_USD = 10;

export const localConfigSchema = z.strictObject({
  /** USD; the local spending cap. */
  localCapUsd: z.number().min(0).max(1e9).default(DEFAULT_LOCAL_CAP_USD),
  captureRollbackPreImages: z.boolean().default(false),
});

export interface LocalConfig {
  readonly localCapUsd: number;
  readonly captureRollbackPreImages: boolean;
  /** The file the values came from; null: none exists, the defaults apply. */
  readonly source: string | null;
}

/** A file larger than this is not a settings file. */
const MAX_BYTES = 64 * 1024;

export function localConfigCandidates(folder: string, env: NodeJS.ProcessEnv): string[] {
  const project = join(folder, '.svc', 'config.json');
  const home = join(svcHome(env), 'config.json');
  return project === home ? [project] : [project, home];
}

/** The local config for `folder`. A file that exists but does not read is an error naming it (ConfigError). */
export async function readLocalConfig(folder: string, env: NodeJS.ProcessEnv = process.env): Promise<LocalConfig> {
  for (const file of localConfigCandidates(folder, env)) {
    let text: string;
    try {
      const bytes = await readFile(file);
      if (bytes.length > MAX_BYTES) throw new ConfigError(`${file} is over ${MAX_BYTES / 1024} KiB; it is not a svc config file`);
      text = bytes.toString('utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT' || (err as NodeJS.ErrnoException).code === 'ENOTDIR') continue;
      if (err instanceof ConfigError) throw err;
      throw new ConfigError(`cannot read ${file}: ${(err as Error).message}`);
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (err) {
      throw new ConfigError(`${file} is not valid JSON: ${(err as Error).message}`);
    }
    const parsed = localConfigSchema.safeParse(json);
    if (!parsed.success) {
      // Loaded only here: the hook gate reads this file on every call.
      const { describeZodError } = await import('../config/zod-error.js');
      throw new ConfigError(`${file} does not read: ${describeZodError(parsed.error)} (keys: localCapUsd, captureRollbackPreImages)`);
    }
    return { ...parsed.data, source: file };
  }
  return { localCapUsd: DEFAULT_LOCAL_CAP_USD, captureRollbackPreImages: false, source: null };
}
