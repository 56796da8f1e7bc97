import t from 'tap';
import { readFile } from 'node:fs/promises';
import { createLogger } from '../../../src/lib/logger.js';
import { sha256 } from '../../../src/policy/wasm/rule-files.js';
import { WasmRuleRunner } from '../../../src/policy/wasm/runner.js';
import { buildSnapshot, type RuleSetSnapshot } from '../../../src/policy/wasm/snapshot.js';
import { compileRules, shellCall } from '../../helpers/wasm.js';

// Every rule is metered when it loads (binaryen in a child process): slow on a loaded machine.
t.setTimeout(600_000);

const rules = await compileRules(t, ['splits-command', 'lists-shell-commands']);
const runner = new WasmRuleRunner({ memoryCapPages: 256, failurePolicy: 'closed', logger: createLogger('silent') });
t.teardown(() => runner.close());
async function setOf(name: keyof typeof rules): Promise<RuleSetSnapshot> {
  const bytes = new Uint8Array(await readFile(rules[name]));
  return buildSnapshot([{ name, priority: 10, sha256: sha256(bytes), bytes }]);
}

/** What a rule that blocks with its findings as the reason answers on `ctx`. */
async function reasonOf(set: RuleSetSnapshot, ctx: ReturnType<typeof shellCall>): Promise<string> {
  const decision = await runner.evaluate(set, ctx);
  return decision.action === 'block' ? decision.reason : `<${decision.action}>`;
}

const set = await setOf('splits-command');

/** A test's name: every character outside printable ASCII as its escape (a raw line separator would end the TAP line). */
function printable(line: string): string {
  return line.replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** The SDK's `commands()` of a command line, as the rule reports it. */
function split(line: string): Promise<string> {
  return reasonOf(set, shellCall(line));
}

t.test('the SDK splits a command line into simple commands and words as a POSIX shell does', async (t) => {
  const cases: Array<[string, string]> = [
    ['git status && ls -la src/ | head -n 20', '[git][status];[ls][-la][src/];[head][-n][20]'],
    ['sudo  rm\t-rf \\\n / # gone', '[sudo][rm][-rf][/]'],
    ['a;b&c|d(e)f\ng', '[a];[b];[c];[d];[e];[f];[g]'],
    ['echo "a b"\'c d\'e\\ f', '[echo][a bc de f]'],
    ['printf "a\\"b" \'x\\y\'', '[printf][a"b][x\\y]'],
    ['x#y # z\nnext', '[x#y];[next]'],
    ['ls\r\nrm x', '[ls];[rm][x]'],
    ['echo \\\r\nnext', '[echo][next]'],
    ['echo a\\', '[echo][a]'],
    ["echo 'abc", '[echo][abc]'],
    ['echo "abc', '[echo][abc]'],
    [';;  ; \t', 'blocked by rule'],
    // Characters past ASCII are plain: none is a blank, a separator or a quote to the shell.
    ['café naïve—ok ∣ x', '[café][naïve—ok][∣][x]'],
    ['rm\u00a0-rf /', '[rm\u00a0-rf][/]'],
    ['a\u2028b c', '[a\u2028b][c]'],
    ['\ud800x y', '[\ud800x][y]'],
    ['\u007f\u0001 z', '[\u007f\u0001][z]'],
  ];
  for (const [line, expected] of cases) t.equal(await split(line), expected, printable(line));
});

t.test("the example checks' shellCommands follow shells started with -c, each script's commands right after the command that starts it, three deep", async (t) => {
  const lists = await setOf('lists-shell-commands');
  const list = (ctx: ReturnType<typeof shellCall>) => reasonOf(lists, ctx);
  const cases: Array<[string, string]> = [
    ["bash -lc 'git push -f origin main'", '[bash][-lc][git push -f origin main];[git][push][-f][origin][main]'],
    ['sh -c "rm -rf ~"; rm -rf /', '[sh][-c][rm -rf ~];[rm][-rf][~];[rm][-rf][/]'],
    [`bash -c 'sh -c "ls; pwd"' && echo done`, '[bash][-c][sh -c "ls; pwd"];[sh][-c][ls; pwd];[ls];[pwd];[echo][done]'],
    ['ls; bash -c "a; b"; c', '[ls];[bash][-c][a; b];[a];[b];[c]'],
  ];
  for (const [line, expected] of cases) t.equal(await list(shellCall(line)), expected, line);
  t.equal(
    await list({ ...shellCall(''), toolArguments: JSON.stringify({ command: ['bash', '-lc', 'git status; git push -f'] }) }),
    '[bash][-lc][git status; git push -f];[git][status];[git][push][-f]',
    'an argv array, and the script it hands a shell',
  );
  // Each level quotes the one inside it: sh -c "sh -c \"…\"".
  const nested = (levels: number): string => (levels === 0 ? 'ls' : `sh -c "${nested(levels - 1).replace(/["\\]/g, '\\$&')}"`);
  const three = (await list(shellCall(nested(3)))).split(';');
  t.equal(three.length, 4, 'three shells deep, the innermost command is listed');
  t.equal(three.at(-1), '[ls]');
  const four = (await list(shellCall(nested(4)))).split(';');
  t.equal(four.length, 4, 'four deep, the fourth script is not followed');
  t.equal(four.at(-1), '[sh][-c][ls]');
});
