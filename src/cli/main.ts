#!/usr/bin/env node
// `svc gate hook <harness>` runs before every tool call a harness makes: it loads only the gate,
// not the command-line program and its commands' modules, and those from one bundled file that
// `npm run build` makes (scripts/bundle-gate-hook.js); from the modules themselves when a build
// left it out.
const [, , command, sub, harness] = process.argv;
if (command === 'gate' && sub === 'hook' && harness !== undefined && !harness.startsWith('-')) {
  const { runHookCommand } = await loadHookCommand();
  await runHookCommand(harness);
} else {
  await import('./program.js');
}

type HookCommandModule = typeof import('./gate-hook-command.js');

async function loadHookCommand(): Promise<HookCommandModule> {
  const bundle = new URL('./gate-hook.bundle.js', import.meta.url);
  const { existsSync } = await import('node:fs');
  return existsSync(bundle) ? ((await import(bundle.href)) as HookCommandModule) : import('./gate-hook-command.js');
}
