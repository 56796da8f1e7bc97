import t from 'tap';
import { readFile } from 'node:fs/promises';
import { createLogger } from '../../../src/lib/logger.js';
import type { RuleContext } from '../../../src/policy/wasm/abi.js';
import { declaredPrograms, derivedTexts, MAX_PROGRAM_CHARS, MAX_PROGRAMS, Programs } from '../../../src/policy/wasm/programs.js';
import { sha256 } from '../../../src/policy/wasm/rule-files.js';
import { WasmRuleRunner } from '../../../src/policy/wasm/runner.js';
import { buildSnapshot, type RuleSetSnapshot } from '../../../src/policy/wasm/snapshot.js';
import { compileRules, shellCall, textCall, wat } from '../../helpers/wasm.js';

// Every rule is metered when it loads (binaryen in a child process): slow on a loaded machine.
t.setTimeout(600_000);

function setOf(name: string, bytes: Uint8Array): RuleSetSnapshot {
  return buildSnapshot([{ name, priority: 10, sha256: sha256(bytes), bytes }]);
}

function runner(t: Tap.Test): WasmRuleRunner {
  const r = new WasmRuleRunner({ fuel: 5_000_000, memoryCapPages: 256, failurePolicy: 'closed', logger: createLogger('silent') });
  t.teardown(() => r.close());
  return r;
}

/** A call with these JSON arguments, emitted as `emitted` (default: as JSON.stringify writes them). */
function callWith(args: Record<string, unknown>, emitted = JSON.stringify(args)): RuleContext {
  return { ...shellCall(''), toolArguments: emitted };
}

t.test('a declaration is names apart by commas, printable ASCII with no blank, quote, backslash or comma', async (t) => {
  t.same(new Programs('rm').names, ['rm']);
  t.same(new Programs('git,gh,git').names, ['git', 'gh'], 'a name declared twice is one');
  t.same(new Programs('kubectl,docker-compose,a.b,x+y,[z]').names, ['kubectl', 'docker-compose', 'a.b', 'x+y', '[z]']);
  t.same(new Programs('x'.repeat(MAX_PROGRAM_CHARS)).names, ['x'.repeat(MAX_PROGRAM_CHARS)]);
  t.equal(new Programs(Array.from({ length: MAX_PROGRAMS }, (_, i) => `p${i}`).join(',')).names.length, MAX_PROGRAMS);
  for (const bad of ['', 'rm,', ',rm', 'a b', 'a\tb', 'a"b', "a'b", 'a\\b', 'rm\n', 'é', 'x'.repeat(MAX_PROGRAM_CHARS + 1)]) {
    t.throws(() => new Programs(bad), /a name is 1 to 64 printable ASCII characters, no blank, quote, backslash or comma/, JSON.stringify(bad));
  }
  t.throws(() => new Programs(Array.from({ length: MAX_PROGRAMS + 1 }, (_, i) => `p${i}`).join(',')), /declares 65 programs, over the 64 allowed/);
});

t.test('a name is found with quoting between its characters, in any case; characters special to patterns are themselves', async (t) => {
  const rm = new Programs('rm');
  for (const text of ['rm', 'sudo /bin/rm -rf /', "r''m", 'r""m', '"r"m', 'r\\m', 'r\\\nm', 'r\\\r\nm', 'RM', 'Rm', 'farm', 'r\'"\\m']) {
    t.ok(rm.occurIn(text), JSON.stringify(text));
  }
  for (const text of ['r m', 'r\tm', 'r;m', 'r-m', 'mr', 'r', '', 'r$m']) t.notOk(rm.occurIn(text), JSON.stringify(text));
  const odd = new Programs('a.b,x+y,[z],(q)');
  t.ok(odd.occurIn('run a.b'));
  t.notOk(odd.occurIn('axb xy z q'), 'a dot, a plus, brackets and parentheses are only themselves');
  t.ok(odd.occurIn("x'+'y") && odd.occurIn('[z]') && odd.occurIn('(q)'));
});

t.test('the texts of a call besides its arguments as emitted: the JSON of each that is not a string, and every string and key where escapes are', async (t) => {
  t.same(derivedTexts('{"command":"ls"}', { command: 'ls' }), [], 'no escape: the emitted text says it all');
  t.same(derivedTexts('{"command": ["bash", "-lc", "ls"]}', { command: ['bash', '-lc', 'ls'] }), ['["bash","-lc","ls"]']);
  t.same(derivedTexts('{"n": 1e2}', { n: 100 }), ['100'], 'a number as argument() answers it');
  const escaped = '{"c\\u006fmmand":"\\u0072m -rf /","more":{"k\\"ey":["a\\nb"]}}';
  const texts = derivedTexts(escaped, JSON.parse(escaped) as Record<string, unknown>)!;
  for (const decoded of ['command', 'rm -rf /', 'more', 'k"ey', 'a\nb']) t.ok(texts.includes(decoded), `decoded: ${JSON.stringify(decoded)}`);
  // JSON.parse reads arguments nested deeper than JSON.stringify can write: such a call may run anything.
  const deep = JSON.parse(`{"x":${'['.repeat(100_000)}"rm"${']'.repeat(100_000)}}`) as Record<string, unknown>;
  t.equal(derivedTexts('{"x":[[…]]}', deep), null);
});

/** A module that blocks every call it is run on, declaring `declared` (UTF-16 at 20, its byte length at 16) or answering `address`. */
function declaring(declared: string, address = 20, lengthBytes = declared.length * 2): Uint8Array<ArrayBuffer> {
  const utf16 = [...Buffer.from(declared, 'utf16le')].map((b) => `\\${b.toString(16).padStart(2, '0')}`).join('');
  const length = [0, 8, 16, 24].map((shift) => `\\${((lengthBytes >>> shift) & 0xff).toString(16).padStart(2, '0')}`).join('');
  return wat(`(module
  (import "env" "memory" (memory 1))
  (data (i32.const 16) "${length}${utf16}")
  (func (export "svc_abi_version") (result i32) (i32.const 1))
  (func (export "svc_programs") (result i32) (i32.const ${address}))
  (func (export "svc_evaluate") (result i32) (i32.const 1)))`);
}

t.test('a module that declares programs is run on a tool call only when it may run one; always on other kinds and on raw text', async (t) => {
  const r = runner(t);
  const set = setOf('zzz-only', declaring('zzz,yyy'));
  const [check] = await r.check(set);
  t.same(check, { kinds: 7, programs: ['zzz', 'yyy'] });
  const action = async (ctx: RuleContext) => (await r.evaluate(set, ctx)).action;
  t.equal(await action(shellCall('ls -la')), 'allow', 'a call that runs neither is not asked');
  t.equal(await action(shellCall('zzz now')), 'block');
  t.equal(await action(shellCall('sudo Y"y"Y')), 'block', 'quoted, in another case');
  t.equal(await action(callWith({ path: 'README.md' })), 'allow');
  t.equal(await action(callWith({ command: 'z\u007az' }, '{"command":"z\\u007az"}')), 'block', 'spelt with escapes');
  t.equal(await action(callWith({ command: ['bash', '-lc', 'zzz'] })), 'block', 'in an argv array');
  t.equal(await action(textCall('print("nothing here")')), 'block', 'raw text: always asked');
  const deep = `{"x":${'['.repeat(100_000)}${']'.repeat(100_000)}}`;
  t.equal(await action(callWith(JSON.parse(deep) as Record<string, unknown>, deep)), 'block', 'arguments nested too deep to write as JSON: always asked');
  t.equal(await action({ ...shellCall(''), toolArguments: '[1, 2]' }), 'block', 'arguments that are not an object: always asked');
  t.equal(await action({ ...shellCall(''), kind: 'request', toolName: null, toolArguments: null, toolInput: null, text: 'hello' }), 'block', 'a request: always asked');
  t.equal(await action({ ...shellCall(''), kind: 'response', toolName: null, toolArguments: null, toolInput: null, text: 'hello' }), 'block', 'a response: always asked');
});

t.test('rules that declare the same programs share the declaration: a call is tested against it once', async (t) => {
  t.equal(declaredPrograms('zzz,yyy'), declaredPrograms('zzz,yyy'), 'one object for one text');
  t.not(declaredPrograms('zzz'), declaredPrograms('zzz,yyy'));
  t.throws(() => declaredPrograms('a b'), /a name is 1 to 64 printable ASCII characters/, 'a bad declaration is refused as the constructor refuses it');
  const first = declaring('qqq');
  // The same code under another hash: an empty custom section at the end.
  const second = new Uint8Array([...first, 0x00, 0x02, 0x01, 0x61]);
  const r = runner(t);
  const set = buildSnapshot([
    { name: 'first', priority: 10, sha256: sha256(first), bytes: first },
    { name: 'second', priority: 20, sha256: sha256(second), bytes: second },
  ]);
  const checks = await r.check(set);
  t.same(checks, [{ kinds: 7, programs: ['qqq'] }, { kinds: 7, programs: ['qqq'] }]);
  let tests = 0;
  const occurIn = Programs.prototype.occurIn;
  Programs.prototype.occurIn = function (this: Programs, text: string) {
    tests++;
    return occurIn.call(this, text);
  };
  t.teardown(() => {
    Programs.prototype.occurIn = occurIn;
  });
  t.equal((await r.evaluate(set, shellCall('ls -la'))).action, 'allow', 'neither rule runs');
  t.equal(tests, 1, 'the call is tested once for both rules');
  const blocked = await r.evaluate(set, shellCall('qqq now'));
  t.same([blocked.action, blocked.rule], ['block', 'first']);
});

t.test('a declaration that cannot be read or is not a list of names keeps the module from loading, saying why', async (t) => {
  const r = runner(t);
  const cases: Array<[string, Uint8Array<ArrayBuffer>, RegExp]> = [
    ['empty', declaring(''), /svc_programs: it declares the program "": a name is 1 to 64/],
    ['a blank', declaring('git push'), /svc_programs: it declares the program "git push"/],
    ['too many', declaring(Array.from({ length: 65 }, (_, i) => `p${i}`).join(',')), /svc_programs: it declares 65 programs, over the 64 allowed/],
    ['no address', declaring('rm', 0), /svc_programs answered 0, outside its memory \(65536 bytes\)/],
    ['past the memory', declaring('rm', 70_000), /svc_programs answered 70000, outside its memory/],
    ['an odd length', declaring('rm', 20, 3), /svc_programs answered 20, where no UTF-16 string of at most 8320 bytes lies \(its length reads 3\)/],
    ['a length past the memory', declaring('rm', 20, 0x7fff_fff0), /where no UTF-16 string of at most 8320 bytes lies/],
  ];
  for (const [name, bytes, why] of cases) {
    const [check] = await r.check(setOf(name, bytes));
    t.match(check, { error: why }, name);
  }
});

/** A deterministic source of choices. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let x = Math.imul(s ^ (s >>> 15), 1 | s);
    x ^= x + Math.imul(x ^ (x >>> 7), 61 | x);
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Command lines meant to hide or nearly spell `rm`: words quoted, escaped and continued across
 * lines at any point, in any case, behind wrappers, in nested shells, in comments, beside words
 * that hold the letters apart.
 */
function commandLines(count: number, seed: number): string[] {
  const next = random(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!;
  const words = ['rm', 'RM', 'rM', 'charm', 'format', 'r', 'm', 'ls', 'git', 'push', '-rf', '/', '*', 'docker', 'r-m', 'mr', 'x', '$HOME', 'r$m', 'arm64', 'r\u212am'];
  const wrappers = ['sudo', 'env A=1', 'xargs -n 1', 'nohup', 'command', 'time', '/usr/bin/env', 'sudo -u root'];
  const separators = [' ', '  ', '\t', ' ; ', ' && ', ' | ', '\n', ' || ', '(', ')', ' & '];
  const disguise = (word: string): string => {
    if (word.length < 2 || next() < 0.35) return word;
    const at = 1 + Math.floor(next() * (word.length - 1));
    const [a, b] = [word.slice(0, at), word.slice(at)];
    return pick([`${a}''${b}`, `${a}""${b}`, `"${a}"${b}`, `'${a}'"${b}"`, `${a}\\${b}`, `${a}\\\n${b}`, `${a}\\\r\n${b}`, `"${a}\\${b}"`, `${a} ${b}`, `${a}#${b}`, `'${word}'`, `"${word}"`]);
  };
  const line = (depth: number): string => {
    const parts: string[] = [];
    const commands = 1 + Math.floor(next() * 3);
    for (let c = 0; c < commands; c++) {
      if (c > 0) parts.push(pick(separators));
      if (next() < 0.3) parts.push(pick(wrappers), ' ');
      if (depth < 2 && next() < 0.2) {
        const inner = line(depth + 1);
        parts.push(pick(['bash', 'sh', 'zsh']), ' -c ', next() < 0.5 ? `'${inner.replaceAll("'", `'\\''`)}'` : `"${inner.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`);
        continue;
      }
      const n = 1 + Math.floor(next() * 4);
      for (let w = 0; w < n; w++) parts.push(w > 0 ? pick([' ', ' ', '\t', '\\\n']) : '', disguise(pick(words)));
      if (next() < 0.1) parts.push(' # ', pick(words));
    }
    return parts.join('');
  };
  return Array.from({ length: count }, () => line(0));
}

/** The JSON arguments a call carries `line` in, in one of the shapes agents' tools use. */
function argumentsOf(line: string, shape: number): { args: Record<string, unknown>; emitted: string } {
  const args: Record<string, unknown> = [
    { command: line },
    { cmd: line, timeout: 30 },
    { script: line },
    { command: ['bash', '-lc', line] },
    { command: line.split(' ') },
    { command: { run: line } },
  ][shape % 6]!;
  const plain = JSON.stringify(args);
  // Every third call is emitted with its letters r and m escaped, as a model may write them.
  const emitted = shape % 3 === 0 ? plain.replace(/[rm]/g, (c) => `\\u00${c.charCodeAt(0).toString(16)}`) : plain;
  return { args, emitted };
}

t.test('declaring `rm` never changes a verdict: a rule that blocks on any word holding rm, with and without the declaration', async (t) => {
  const built = await compileRules(t, ['blocks-words-with-rm', 'blocks-words-with-rm-declared']);
  const r = runner(t);
  const plain = setOf('plain', new Uint8Array(await readFile(built['blocks-words-with-rm'])));
  const declared = setOf('declared', new Uint8Array(await readFile(built['blocks-words-with-rm-declared'])));
  const rm = new Programs('rm');
  const lines = commandLines(3000, 20261129);
  let blocked = 0;
  let skipped = 0;
  for (let i = 0; i < lines.length; i++) {
    const { args, emitted } = argumentsOf(lines[i]!, i);
    const ctx = callWith(args, emitted);
    const [a, b] = [await r.evaluate(plain, ctx), await r.evaluate(declared, ctx)];
    if (a.failures.length > 0 || b.failures.length > 0) return t.fail(`call ${i} failed: ${JSON.stringify([a.failures, b.failures])}`);
    if (a.action !== b.action || a.reason !== b.reason) return t.fail(`call ${i} (${JSON.stringify(emitted)}): ${a.action} ${a.reason} without the declaration, ${b.action} ${b.reason} with it`);
    if (a.action === 'block') blocked++;
    if (!rm.occurIn(emitted) && !derivedTexts(emitted, args)!.some((text) => rm.occurIn(text))) skipped++;
  }
  t.pass('3,000 calls, the same verdict with and without the declaration');
  // Both ways are exercised: many calls run rm somewhere, many are skipped.
  t.ok(blocked > 600, `${blocked} blocked`);
  t.ok(skipped > 600, `${skipped} skipped`);
});
