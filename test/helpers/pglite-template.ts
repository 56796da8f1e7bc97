import { execFile } from 'node:child_process';
import { access, mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { PGlite } from '@electric-sql/pglite';

const run = promisify(execFile);

/** Where tools keep their caches: gone with node_modules (so with every `npm ci`), never aged out file by file as /tmp is. */
const CACHE = fileURLToPath(new URL('../../node_modules/.cache/', import.meta.url));

/** Written last: a template without it was cut short and is made again. */
const COMPLETE = '.svc-template-complete';

async function pgliteVersion(): Promise<string> {
  const require = createRequire(import.meta.url);
  const manifest = join(dirname(require.resolve('@electric-sql/pglite')), '..', 'package.json');
  return (JSON.parse(await readFile(manifest, 'utf8')) as { version: string }).version;
}

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}

let template: Promise<string> | undefined;

/**
 * A data directory PGlite has just initialised, made once per installation and PGlite version. Its
 * initdb costs seconds of CPU a control plane; the suite starts over a hundred of them.
 */
function initialisedDataDir(): Promise<string> {
  template ??= (async () => {
    await mkdir(CACHE, { recursive: true });
    const path = join(CACHE, `svc-test-pglite-${await pgliteVersion()}`);
    if (await exists(path)) {
      // Renamed into place with its mark in it: one without the mark was damaged after it was made.
      if (await exists(join(path, COMPLETE))) return path;
      await rm(path, { recursive: true, force: true });
    }
    const making = await mkdtemp(`${path}.making-`);
    const db = await PGlite.create(making);
    await db.close();
    await writeFile(join(making, COMPLETE), '');
    // Another test process may have made it meanwhile: either copy is as good.
    await rename(making, path).catch(() => rm(making, { recursive: true, force: true }));
    return path;
  })();
  return template;
}

/**
 * Gives `home` the embedded database of a control plane's first start, copied from the template
 * (the control plane then opens it and runs its migrations as on any start). Tests that are
 * about a first start leave their home empty instead.
 */
export async function seedEmbeddedDatabase(home: string): Promise<void> {
  const target = join(home, 'controlplane', 'db');
  if (await exists(target)) return;
  const source = await initialisedDataDir();
  await mkdir(dirname(target), { recursive: true });
  // cp(1): a tenth of the time of Node's recursive copy for PGlite's thousand small files.
  await run('cp', ['-R', source, target]);
  await rm(join(target, COMPLETE));
}
