import { ACTION_PHRASES, ACTIONS, type Action } from './commands.js';
import type { GateRule, Snapshot } from './snapshot.js';

/** The tool names a rule must cover to govern a harness's shell. */
const SHELL_TOOLS = ['*', 'Bash', 'Shell', 'shell', 'exec_command', 'local_shell'];

const starlark = (s: string) => JSON.stringify(s);

/**
 * The snapshot's command rules as Codex exec-policy rules (`prefix_rule`, Starlark): each phrase of
 * a block or hold rule on the shell (and each phrase of its actions) becomes a `forbidden` prefix
 * rule. A hold is forbidden too: Codex's rules cannot ask the control plane for an approval, and
 * prompting would let the requester approve their own hold. Codex matches an exact prefix of the
 * command's words, so a phrase with flags between its words is caught by the gate hook of other
 * harnesses but not here; rules on non-shell tools have no Codex equivalent and are listed as comments.
 */
export function codexRules(snapshot: Snapshot): string {
  const lines = ['# Written by svc gates install from the policy snapshot; svc gates install rewrites it, svc gates uninstall removes it.', ''];
  const skipped: string[] = [];
  for (const rule of snapshot.rules) {
    if (rule.verb === 'log') continue;
    const phrases = phrasesOf(rule);
    if (phrases.length === 0 || !rule.tools.some((t) => SHELL_TOOLS.includes(t))) {
      skipped.push(rule.id);
      continue;
    }
    const why = `${rule.verb === 'hold' ? 'Held for a person\'s review' : 'Blocked'} by svc rule ${rule.id}: ${rule.reason}`;
    for (const phrase of phrases) {
      const pattern = phrase.trim().split(/\s+/);
      lines.push('prefix_rule(', `    pattern = [${pattern.map(starlark).join(', ')}],`, '    decision = "forbidden",', `    justification = ${starlark(why)},`, ')');
    }
  }
  if (skipped.length > 0) lines.push('', `# Not expressible as command prefixes (enforced by the gate hook where a harness has one): ${skipped.join(', ')}`);
  return `${lines.join('\n')}\n`;
}

function phrasesOf(rule: GateRule): string[] {
  const actions = (rule.actions ?? []).filter((a): a is Action => (ACTIONS as readonly string[]).includes(a));
  return [...(rule.phrases ?? []), ...actions.flatMap((a) => ACTION_PHRASES[a])];
}
