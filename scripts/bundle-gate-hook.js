// Bundles `svc gate hook` into one file, dist/cli/gate-hook.bundle.js (run by `npm run build`,
// after tsc). A harness starts the hook once per tool call, and resolving, reading and linking its
// ~130 modules one by one costs a short-lived process more than running it does.
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

await build({
  entryPoints: [`${dist}gate-hook-command.js`],
  outfile: `${dist}gate-hook.bundle.js`,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  // Native addons stay in node_modules, loaded as they are.
  external: ['re2', '@trufflesuite/uws-js-unofficial'],
  plugins: [englishOnly],
  logLevel: 'warning',
});
