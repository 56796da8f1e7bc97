import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { promisify } from 'node:util';
import binaryen from 'binaryen';
import { compileRule } from '../../src/policy/wasm/compile.js';
import { CLI } from './proxy.js';

interface Teardown {
  teardown(fn: () => unknown): void;
}

export const ASSEMBLY = fileURLToPath(new URL('../../assembly/', import.meta.url));

/** AssemblyScript that blocks with the commands in \`all\` as its reason: each word in brackets, commands apart by ";". */
const BLOCK_WITH_COMMANDS = `  const out = new Array<string>();
  for (let i = 0; i < all.length; i++) out.push("[" + all[i].join("][") + "]");
  return block(out.join(";"));`;

/**
 * AssemblyScript that blocks when a word of the call's `shellCommands()` holds "rm", in any case,
 * wherever it stands in the command, naming the word.
 */
const BLOCKS_WORDS_WITH_RM = `
import { block } from "SDK";
import { shellCommands } from "CHECKS/command";
export { svc_abi_version } from "SDK";
export function svc_evaluate(): i32 {
  const all = shellCommands();
  for (let i = 0; i < all.length; i++) {
    for (let j = 0; j < all[i].length; j++) if (all[i][j].toLowerCase().includes("rm")) return block("rm in " + all[i][j]);
  }
  return 0;
}`;

/**
 * Rules written only for tests: most a misbehaviour the host must survive. Those that test what a
 * call leaves behind read the \`command\` argument, so calls that differ in it each run (the host
 * remembers an arena rule's verdict by what it read, see verdict-memo.ts).
 */
const TEST_RULES = {
  'blocks-words-with-rm': BLOCKS_WORDS_WITH_RM,
  /** As blocks-words-with-rm, declaring that it judges only commands that run `rm`. */
  'blocks-words-with-rm-declared': `${BLOCKS_WORDS_WITH_RM}
export function svc_programs(): string {
  return "rm";
}`,
  /** Spins forever on a `spin` tool call, allows everything else. */
  'infinite-loop': `
import { toolName } from "SDK";
export { svc_abi_version } from "SDK";
let n: i32 = 0;
export function svc_evaluate(): i32 {
  if (toolName() == "spin") while (true) n++;
  return 0;
}`,
  /** Never finishes instantiating: its top-level code loops. */
  'loops-at-start': `
export { svc_abi_version } from "SDK";
let n: i32 = 0;
while (n >= 0) n = (n + 1) & 0xffff;
export function svc_evaluate(): i32 { return n; }`,
  /** Traps on every evaluation. */
  trap: `
export { svc_abi_version } from "SDK";
export function svc_evaluate(): i32 {
  unreachable();
  return 0;
}`,
  /** Speaks an ABI from the future. */
  'wrong-abi': `
export function svc_abi_version(): i32 { return 99; }
export function svc_evaluate(): i32 { return 0; }`,
  /** Blocks everything (so it cannot be installed; tests write it into the folder directly). */
  'block-everything': `
import { block } from "SDK";
export { svc_abi_version } from "SDK";
export function svc_evaluate(): i32 {
  return block("this rule blocks everything");
}`,
  /** Refuses requests whose last message asks to drop a database. */
  'no-drop-database': `
import { allow, block, Kind, kind, text } from "SDK";
export { svc_abi_version } from "SDK";
export function svc_evaluate(): i32 {
  if (kind() == Kind.Request && text().toUpperCase().includes("DROP DATABASE")) return block("dropping a database is not allowed");
  return allow();
}`,
  /** Withholds answers that quote a classified document; evaluates responses only. */
  'response-guard': `
import { allow, block, Kinds, text } from "SDK";
export { svc_abi_version } from "SDK";
export function svc_kinds(): i32 { return Kinds.Response; }
export function svc_evaluate(): i32 {
  return text().includes("TOP SECRET") ? block("the answer quotes a classified document") : allow();
}`,
  /** Reports, as its block reason, how the host handed it a tool call's input. */
  'input-probe': `
import { argument, block, inputIsText, textCommands } from "SDK";
export { svc_abi_version } from "SDK";
export function svc_evaluate(): i32 {
  const cmd = argument("cmd");
  return block("input=" + (inputIsText() ? "text" : "json") + " cmd=" + (cmd == null ? "<none>" : cmd) + " literals=" + textCommands().join("|"));
}`,
  /** Reports, as its block reason, the simple commands of its \`command\` argument: each word in brackets, commands apart by ";". */
  'splits-command': `
import { argument, block, commands } from "SDK";
export { svc_abi_version } from "SDK";
export function svc_evaluate(): i32 {
  const all = commands(argument("command")!);
${BLOCK_WITH_COMMANDS}
}`,
  /** Reports, as its block reason, the example checks' \`shellCommands()\` of the call: each word in brackets, commands apart by ";". */
  'lists-shell-commands': `
import { block } from "SDK";
import { shellCommands } from "CHECKS/command";
export { svc_abi_version } from "SDK";
export function svc_evaluate(): i32 {
  const all = shellCommands();
${BLOCK_WITH_COMMANDS}
}`,
  /** Allocates without bound on a \`hog\` tool call. */
  'memory-hog': `
import { toolName } from "SDK";
export { svc_abi_version } from "SDK";
const keep = new Array<ArrayBuffer>();
export function svc_evaluate(): i32 {
  if (toolName() == "hog") while (true) keep.push(new ArrayBuffer(1 << 20));
  return 0;
}`,
  /** Keeps what it sees between calls, where the host lets it: a counter, a list, a table built on first use. */
  remembers: `
import { argument, block, toolName } from "SDK";
export { svc_abi_version } from "SDK";
let calls: i32 = 0;
const seen = new Array<string>();
let table: Map<string, i32> | null = null;
export function svc_evaluate(): i32 {
  argument("command");
  calls++;
  seen.push(toolName());
  if (table == null) {
    const built = new Map<string, i32>();
    built.set("read_file", 1);
    built.set("bash", 2);
    table = built;
  }
  const known = table!.has(toolName()) ? table!.get(toolName()) : 0;
  return block("calls=" + calls.toString() + " seen=" + seen.join(",") + " known=" + known.toString());
}`,
  /** Reports, as its block reason, the arguments \`a\`, \`b\` and \`a\` again, each as the host wrote it. */
  'reads-arguments': `
import { argument, block } from "SDK";
export { svc_abi_version } from "SDK";
export function svc_evaluate(): i32 {
  const a = argument("a");
  const b = argument("b");
  const again = argument("a");
  return block("a=" + (a == null ? "<none>" : a) + "|b=" + (b == null ? "<none>" : b) + "|a=" + (again == null ? "<none>" : again));
}`,
  /** Allows when the argument the tool's name names is "yes": a name made afresh in every call, at the same place. */
  'reads-named-argument': `
import { allow, argument, block, toolName } from "SDK";
export { svc_abi_version } from "SDK";
export function svc_evaluate(): i32 {
  const value = argument(toolName());
  return value != null && value == "yes" ? allow() : block("value=" + (value == null ? "<none>" : value));
}`,
  /** Takes a mebibyte of heap when it starts, so that putting it back costs a mebibyte's copy; writes into it on a \`scribble\` tool call only. */
  'big-heap': `
import { argument, toolName } from "SDK";
export { svc_abi_version } from "SDK";
const reserved = __alloc(1 << 20);
export function svc_evaluate(): i32 {
  argument("command");
  if (toolName() == "scribble") store<u8>(reserved + 1000, 1);
  return reserved == 0 ? 1 : 0;
}`,
  /** Allocates a mebibyte on every call and keeps none of it. */
  allocates: `
import { argument } from "SDK";
export { svc_abi_version } from "SDK";
export function svc_evaluate(): i32 {
  argument("command");
  const buffer = new Uint8Array(1 << 20);
  buffer[buffer.length - 1] = 1;
  return buffer[buffer.length - 1] == 1 ? 0 : 1;
}`,
} as const;

export type ExampleRule = 'index' | 'destructive-shell' | 'latest-image' | 'force-push';
export type TestRule = keyof typeof TEST_RULES;

/** Writes a test rule's source into `dir`, its imports of the SDK and of the example checks pointing at assembly/; returns its path. */
async function writeTestRule(dir: string, name: TestRule): Promise<string> {
  const src = join(dir, `${name}.ts`);
  const sdk = relative(dir, join(ASSEMBLY, 'sdk/index')).replace(/\\/g, '/');
  const checks = relative(dir, join(ASSEMBLY, 'checks')).replace(/\\/g, '/');
  await writeFile(src, TEST_RULES[name].replaceAll('"SDK"', JSON.stringify(sdk)).replaceAll('"CHECKS/', `"${checks}/`));
  return src;
}

/** Compiles rules with asc into a temp folder removed when the test ends; returns each module's path. */
export async function compileRules<N extends ExampleRule | TestRule>(t: Teardown, names: readonly N[]): Promise<Record<N, string>> {
  const dir = await mkdtemp(join(tmpdir(), 'svc-wasm-rules-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const out = {} as Record<N, string>;
  for (const name of names) {
    const src =
      name in TEST_RULES ? await writeTestRule(dir, name as TestRule) : name === 'index' ? join(ASSEMBLY, 'index.ts') : join(ASSEMBLY, 'rules', `${name}.ts`);
    out[name] = join(dir, `${name}.wasm`);
    await compileRule({ src, out: out[name], debug: false });
  }
  return out;
}

/**
 * Compiles a test rule with asc and `flags` instead of the way `svc policy compile` does, as a
 * module built by other means might be.
 */
export async function compileWithAsc(t: Teardown, name: TestRule, flags: readonly string[]): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'svc-wasm-asc-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const src = await writeTestRule(dir, name);
  const out = join(dir, `${name}.wasm`);
  const { default: asc } = await import('assemblyscript/asc');
  let diagnostics = '';
  const sink = { write: (chunk: string | Uint8Array) => ((diagnostics += chunk.toString()), true) };
  const result = await asc.main([src, '--outFile', out, ...flags], { stdout: sink, stderr: sink });
  if (result.error) throw new Error(`${result.error.message}\n${diagnostics}`);
  return out;
}

/** A test rule with the incremental runtime and a memory of its own (not imported). */
export function compileWithOwnMemory(t: Teardown, name: TestRule): Promise<string> {
  return compileWithAsc(t, name, ['--runtime', 'incremental', '-O3']);
}

/**
 * A module from WebAssembly text, written with `features` (with all of them, its types are written
 * as GC's, which binaryen does not read back without GC).
 */
export function wat(text: string, features = binaryen.Features.All): Uint8Array<ArrayBuffer> {
  const mod = binaryen.parseText(text);
  mod.setFeatures(features);
  try {
    return mod.emitBinary() as Uint8Array<ArrayBuffer>;
  } finally {
    mod.dispose();
  }
}

/** A tool call's context, as `svc policy test --mock` takes it. */
export function shellCall(command: string, toolName = 'bash') {
  return {
    kind: 'tool_call' as const,
    toolName,
    toolArguments: JSON.stringify({ command }),
    toolInput: 'json' as const,
    model: 'gpt-4o-mini',
    harness: null,
    session: null,
    workspace: 'local',
    text: null,
  };
}

/** A tool call whose input is raw text (a freeform tool's input, code), as the proxy hands it to rules. */
export function textCall(text: string, toolName = 'exec') {
  return { ...shellCall('', toolName), toolArguments: text, toolInput: 'text' as const };
}

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** The real `svc` command from dist/ with `stdin` written to it (a hook's input, a password). */
export async function svcWithStdin(args: string[], stdin: string, env: NodeJS.ProcessEnv, cwd?: string, cli = CLI): Promise<CliResult> {
  const child = spawn(process.execPath, [cli, ...args], { cwd, env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  child.stdin.end(stdin);
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code: code ?? -1, stdout, stderr };
}

/** Runs the real `svc` command from dist/ with the given environment. */
export async function svc(args: string[], env: NodeJS.ProcessEnv): Promise<CliResult> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [CLI, ...args], { env: { ...process.env, ...env } });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}
