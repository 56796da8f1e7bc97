import RE2 from 're2';
import type { ToolHistory } from './history.js';
import { round2, type AnomalyFinding } from './finding.js';

/**
 * Code that fetches or decodes something and executes it in the same breath. RE2 (linear time):
 * these run over model output, which an attacker may shape. The patterns also match inside JSON
 * text (a quote may be escaped), so one pass over all the calls' raw arguments rules most
 * requests out before any argument is parsed.
 */
const EXECUTING_CODE = new RE2(
  [
    // Download piped into an interpreter: curl … | sh, wget -qO- … | sudo bash, iwr … | iex
    String.raw`\b(?:curl|wget|iwr|invoke-webrequest)\b[^\n|]{0,300}\|\s*(?:sudo\s+(?:-\S+\s+)*)?(?:(?:ba|z|da|k)?sh|python[23]?|node|perl|ruby|iex)\b`,
    // A download run through process or command substitution: bash <(curl …), sh -c "$(wget …)"
    String.raw`\b(?:ba|z)?sh\s+(?:-c\s+)?\\?["']?(?:<\(|\$\()\s*(?:curl|wget)\b`,
    // PowerShell download cradles
    String.raw`\b(?:iex|invoke-expression)\b[^\n]{0,60}(?:iwr|invoke-webrequest|downloadstring|net\.webclient)`,
    String.raw`downloadstring\([^)\n]{0,300}\)\s*\|\s*iex\b`,
    // An encoded payload decoded and executed: eval(atob(…)), exec(base64.b64decode(…)), … | base64 -d | sh
    String.raw`\b(?:eval|exec)\b[^\n]{0,80}(?:base64|b64decode|atob\(|fromcharcode|unhexlify|bytes\.fromhex|xxd\s+-r)`,
    String.raw`\bbase64\s+(?:-d|--decode|-D)\b[^\n]{0,80}\|\s*(?:sudo\s+)?(?:(?:ba|z)?sh|python[23]?|perl|node)\b`,
    String.raw`\b(?:powershell|pwsh)(?:\.exe)?\s+(?:-\w+\s+){0,4}-e(?:nc|ncodedcommand)?\s+[A-Za-z0-9+/=]{24,}`,
  ].join('|'),
  'i',
);

/** A shell code block in the model's prose, with words telling the reader to run it. */
const SHELL_BLOCK = new RE2(String.raw`(?:^|\n)\x60\x60\x60\s*(?:bash|sh|shell|zsh|console|powershell|ps1|cmd)?\s*\n`, 'i');
const RUN_THIS = new RE2(
  String.raw`\b(?:run|execute|paste|copy and run|type)\b[^\n]{0,40}\b(?:this|the following|these|below|command|script|in (?:your|a|the) (?:terminal|shell))\b`,
  'i',
);

/** The string values of a call's canonical arguments, unescaped, one per line. */
function argumentText(args: string): string {
  const out: string[] = [];
  const collect = (v: unknown): void => {
    if (typeof v === 'string') out.push(v);
    else if (typeof v === 'object' && v !== null) for (const x of Object.values(v)) collect(x);
  };
  collect(JSON.parse(args));
  return out.join('\n');
}

/** Confidences: executing code is the clear case; a run-this code block alone is only worth a note. */
const EXECUTING = 0.95;
const RUN_THIS_BLOCK = 0.6;

/**
 * `code_as_action`: in what the model wrote since the user last spoke (its prose and the
 * arguments of its calls), code that acts outside the tools the gateway governs — a download
 * piped into a shell, an encoded payload decoded and executed, or a shell code block the reader
 * is told to run.
 */
export function detectCodeAsAction(history: ToolHistory): AnomalyFinding | null {
  const from = history.lastUserMessage;
  const calls = history.calls.filter((c) => c.message > from);
  const texts = history.assistantTexts.filter((t) => t.message > from);
  let executing = 0;
  let runThis = 0;
  const tools = new Set<string>();
  if (calls.length > 0 && EXECUTING_CODE.test(calls.map((c) => c.argsText).join('\n'))) {
    for (const call of calls) {
      if (EXECUTING_CODE.test(argumentText(call.args))) {
        executing++;
        tools.add(call.tool);
      }
    }
  }
  for (const { text } of texts) {
    if (EXECUTING_CODE.test(text)) executing++;
    else if (SHELL_BLOCK.test(text) && RUN_THIS.test(text)) runThis++;
  }
  const hits = executing + runThis;
  if (hits === 0) return null;
  const confidence = executing > 0 ? round2(EXECUTING + 0.01 * (executing - 1)) : RUN_THIS_BLOCK;
  const what = executing > 0 ? 'code that downloads or decodes a payload and executes it' : 'a shell code block it tells the reader to run';
  return {
    detector: 'code_as_action',
    confidence,
    repeats: hits,
    tools: [...tools],
    summary: `the model emitted ${what}${tools.size > 0 ? ` (through ${[...tools].join(', ')})` : ' in its reply'}`,
  };
}

/** Whether a call the model made, or text it wrote, carries executing code (the reask continuation test). */
export function carriesExecutingCode(what: { args: string } | { text: string }): boolean {
  return EXECUTING_CODE.test('args' in what ? argumentText(what.args) : what.text);
}
