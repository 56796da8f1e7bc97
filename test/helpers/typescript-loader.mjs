// Tests run the TypeScript sources directly. tsx transpiles them (esbuild, cached); it is
// registered here rather than with `--import tsx` because on Node 20 that registers it on the
// main thread only, and the policy engine's and WASM rules' worker threads load TypeScript too.
import { register as registerHooks } from 'node:module';
import { register } from 'tsx/esm/api';

register();
// Registered after tsx, so it is asked first.
registerHooks('./binaryen-hook.mjs', import.meta.url);
