// Bundles `svc gate hook` into one CommonJS file with V8's code cache beside it (run by
// `npm run build`, after tsc): dist/cli/gate-hook.bundle.cjs and gate-hook.bundle.cache. A harness
// starts the hook once per tool call; resolving, reading and linking its ~130 modules one by one,
// then compiling them, costs that short-lived process more than running it does.
// src/cli/hook-bundle.ts loads the two and writes the cache.
import { build } from 'esbuild';
import { fileURLToPath } from 'node:url';

const dist = fileURLToPath(new URL('../dist/cli/', import.meta.url));

/**
 * zod's namespace re-exports every locale's messages (40 files, 300 KB), which nothing on this
 * path uses: the hook speaks English, zod's default. Only `en` is kept.
 */
const englishOnly = {
  name: 'zod-english-only',
  /** @param {import('esbuild').PluginBuild} b */
  setup(b) {
    b.onLoad({ filter: /[\\/]zod[\\/]v4[\\/]locales[\\/]index\.js$/ }, (args) => ({
      contents: "export { default as en } from './en.js';",
      resolveDir: fileURLToPath(new URL('.', `file://${args.path}`)),
    }));
  },
};

const { metafile } = await build({
  entryPoints: [`${dist}gate-hook-command.js`],
  outfile: `${dist}gate-hook.bundle.cjs`,
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  // Native addons stay in node_modules, loaded as they are.
  external: ['re2', '@trufflesuite/uws-js-unofficial'],
  // Modules that find files beside themselves keep doing so from the bundle (it sits as deep in dist/).
  define: { 'import.meta.url': '__svcBundleUrl' },
  banner: { js: "const __svcBundleUrl = require('node:url').pathToFileURL(__filename).href;" },
  plugins: [englishOnly],
  metafile: true,
  logLevel: 'warning',
});

// The bundle runs as a vm script, which has no loader for an `import()` left in it.
for (const [file, input] of Object.entries(metafile.inputs)) {
  const dynamic = input.imports.find((i) => i.kind === 'dynamic-import' && i.external === true);
  if (dynamic !== undefined) throw new Error(`${file} imports ${dynamic.path} with import(): the hook bundle cannot load it; import it statically`);
}

const { writeHookBundleCache } = await import('../dist/cli/hook-bundle.js');
writeHookBundleCache();
