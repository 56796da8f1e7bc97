import { instantiateSync } from '@assemblyscript/loader';
import { ABI_VERSION, ALL_KINDS, FIELDS, VERDICT_CODES, type RuleContext, type RuleOutcome, type ToolInputForm } from './abi.js';
import type { DeclaredMemory } from './module-memory.js';

const PAGE_BYTES = 65536;
const MAX_REASON_CHARS = 1000;

/** The call being evaluated, shared by every rule that evaluates it: its arguments are parsed once. */
export class Subject {
  private parsedArguments: Record<string, unknown> | null | undefined;

  constructor(readonly context: RuleContext) {}

  field(id: number): string | null {
    const c = this.context;
    switch (id) {
      case FIELDS.toolName:
        return c.toolName;
      case FIELDS.toolArguments:
        return c.toolArguments;
      case FIELDS.model:
        return c.model;
      case FIELDS.harness:
        return c.harness;
      case FIELDS.session:
        return c.session;
      case FIELDS.workspace:
        return c.workspace;
      case FIELDS.text:
        return c.text;
      case FIELDS.toolInput:
        return this.inputForm();
      default:
        return null;
    }
  }

  /** A top-level argument: a string as itself, another value as JSON text; null when absent. */
  argument(name: string): string | null {
    const value = this.arguments()?.[name];
    if (value === undefined) return null;
    return typeof value === 'string' ? value : JSON.stringify(value);
  }

  private inputForm(): ToolInputForm | null {
    if (this.context.toolInput === null) return null;
    return this.arguments() === null ? 'text' : 'json';
  }

  /** The arguments as a JSON object; null when they are raw text or not a JSON object. */
  private arguments(): Record<string, unknown> | null {
    if (this.parsedArguments === undefined) this.parsedArguments = this.context.toolInput === 'text' ? null : parseObject(this.context.toolArguments);
    return this.parsedArguments;
  }
}

function parseObject(text: string | null): Record<string, unknown> | null {
  if (text === null) return null;
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** A rule that cannot be used: wrong ABI, missing exports, or it trapped while starting. */
export class RuleLoadError extends Error {}

interface RuleExports {
  svc_abi_version?: unknown;
  svc_kinds?: unknown;
  svc_evaluate?: unknown;
  memory?: WebAssembly.Memory;
}

/**
 * One instantiated rule. Its host accessors read the current Subject; strings cross as UTF-16
 * written straight into the rule's memory, so a rule pays only for the fields it asks for.
 */
export class RuleInstance {
  private subject: Subject | null = null;
  private reason = '';
  private readonly memory: WebAssembly.Memory;
  private readonly evaluateFn: () => number;
  private readonly capBytes: number;
  /** The KIND_BITS this rule evaluates. */
  readonly kinds: number;

  constructor(module: WebAssembly.Module, declared: DeclaredMemory | null, memoryCapPages: number) {
    this.capBytes = memoryCapPages * PAGE_BYTES;
    if (declared !== null && declared.minPages > memoryCapPages) {
      throw new RuleLoadError(`the module needs ${declared.minPages} memory pages at start, over the cap of ${memoryCapPages}`);
    }
    // Growth of a module's own memory cannot be stopped from outside: it must promise to stay in the cap.
    if (declared !== null && !declared.imported && (declared.maxPages === null || declared.maxPages > memoryCapPages)) {
      throw new RuleLoadError(`it defines its own memory that may grow past the cap of ${memoryCapPages} pages; compile it with --importMemory`);
    }
    const env: Record<string, unknown> = {};
    if (declared?.imported) {
      const maximum = declared.maxPages === null ? memoryCapPages : Math.min(declared.maxPages, memoryCapPages);
      env.memory = new WebAssembly.Memory({ initial: declared.minPages, maximum });
    }
    const mem = () => this.memory;
    const readUtf16 = (ptr: number, length: number) => Buffer.from(mem().buffer, ptr, length * 2).toString('utf16le');
    const writeUtf16 = (text: string, dest: number) => void Buffer.from(mem().buffer).write(text, dest, 'utf16le');
    const svc = {
      kind: () => (this.subject!.context.kind === 'request' ? 0 : this.subject!.context.kind === 'tool_call' ? 1 : 2),
      field_length: (id: number) => this.subject!.field(id)?.length ?? -1,
      field_read: (id: number, dest: number) => writeUtf16(this.subject!.field(id) ?? '', dest),
      argument_length: (namePtr: number, nameLength: number) => this.subject!.argument(readUtf16(namePtr, nameLength))?.length ?? -1,
      argument_read: (namePtr: number, nameLength: number, dest: number) => writeUtf16(this.subject!.argument(readUtf16(namePtr, nameLength)) ?? '', dest),
      set_reason: (ptr: number, length: number) => {
        this.reason = readUtf16(ptr, Math.min(length, MAX_REASON_CHARS));
      },
    };
    let exports: RuleExports;
    try {
      exports = instantiateSync<Record<string, unknown>>(module, { svc, env }).exports as RuleExports;
    } catch (err) {
      throw new RuleLoadError(`it cannot be instantiated: ${(err as Error).message}`);
    }
    const memory = exports.memory ?? (env.memory as WebAssembly.Memory | undefined);
    if (memory === undefined) throw new RuleLoadError('it has no memory');
    this.memory = memory;
    if (typeof exports.svc_abi_version !== 'function' || typeof exports.svc_evaluate !== 'function') {
      throw new RuleLoadError('it does not export svc_abi_version and svc_evaluate');
    }
    let version: unknown;
    try {
      version = (exports.svc_abi_version as () => number)();
    } catch (err) {
      throw new RuleLoadError(`svc_abi_version trapped: ${(err as Error).message}`);
    }
    if (version !== ABI_VERSION) throw new RuleLoadError(`it speaks ABI version ${String(version)}; this host speaks ${ABI_VERSION}`);
    this.evaluateFn = exports.svc_evaluate as () => number;
    try {
      this.kinds = typeof exports.svc_kinds === 'function' ? (exports.svc_kinds as () => number)() & ALL_KINDS : ALL_KINDS;
    } catch (err) {
      throw new RuleLoadError(`svc_kinds trapped: ${(err as Error).message}`);
    }
  }

  /** Runs the rule; throws when it traps (a growth refused at the memory cap is a trap) or answers nonsense. */
  evaluate(subject: Subject): RuleOutcome {
    this.subject = subject;
    this.reason = '';
    let code: number;
    try {
      code = this.evaluateFn();
    } catch (err) {
      // A grow refused at the cap surfaces as a trap; the memory in use tells the two apart.
      throw new Error(`it trapped with ${this.memory.buffer.byteLength} of its ${this.capBytes} memory bytes in use: ${(err as Error).message}`);
    } finally {
      this.subject = null;
    }
    switch (code) {
      case VERDICT_CODES.allow:
        return { action: 'allow', reason: '' };
      case VERDICT_CODES.block:
        return { action: 'block', reason: this.reason || 'blocked by rule' };
      case VERDICT_CODES.hold:
        return { action: 'hold', reason: this.reason || 'held by rule' };
      default:
        throw new Error(`svc_evaluate returned ${code}, which is not a verdict`);
    }
  }
}
