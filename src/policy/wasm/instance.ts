import { instantiateSync } from '@assemblyscript/loader';
import { isStackOverflow } from '../../lib/errors.js';
import { ABI_VERSION, ALL_KINDS, ARENA_TOP_EXPORT, FIELDS, PROGRAMS_EXPORT, VERDICT_CODES, type RuleContext, type RuleOutcome, type ToolInputForm } from './abi.js';
import { FUEL_PER_BYTES_SHIFT, FuelExhaustedError, HOST_CALL_FUEL, HOST_FUEL_PER_CHARS_SHIFT, METERING_EXPORTS, UNWATCHED_TAIL_BYTES } from './fuel.js';
import type { DeclaredMemory } from './module-memory.js';
import { declaredPrograms, derivedTexts, MAX_DECLARATION_BYTES, type Programs } from './programs.js';
import { importsAnswerOnlyTheHost, KIND_QUESTION, VerdictMemo, type Answering, type Question } from './verdict-memo.js';

const PAGE_BYTES = 65536;
const MAX_REASON_CHARS = 1000;
/** Strings read from a rule up to this length are built char by char. */
const SHORT_STRING = 32;
/** Short strings kept per rule by address; a rule that makes more is asking by strings it builds. */
const MAX_SHORT_TEXTS = 16;
/** Strings written into a rule up to this length are stored unit by unit. */
const SHORT_WRITE = 256;
/** Accessor charges are taken from the fuel once they add up to this much. */
const SETTLE_EVERY = 4096;

const ALLOWED: RuleOutcome = Object.freeze({ action: 'allow', reason: '' });

/** No argument's units yet (never written to: a rule's memory is only ever written from it). */
const NO_UNITS = Buffer.alloc(0);

/** The call being evaluated, shared by every rule that evaluates it: its arguments are parsed once. */
export class Subject implements Answering {
  private parsedArguments: Record<string, unknown> | null | undefined;
  /** The last argument asked for: a rule asks for its length, then for the argument itself. */
  private lastName: string | null = null;
  private lastArgument: string | null = null;
  /**
   * The last argument a rule read, as UTF-16LE: every other rule that reads it copies the same
   * bytes. Kept apart from the last argument asked for, since rules ask after absent ones too.
   */
  private unitsName: string | null = null;
  private units: Buffer = NO_UNITS;
  /** What `mayRun` looks for programs in besides the emitted arguments, once made; null when the arguments cannot tell. */
  private derivedTexts: string[] | null | undefined;
  /** `mayRun`'s answers so far, by declaration (rules that declare the same programs share one). */
  private mayRunAnswers: Map<Programs, boolean> | null = null;

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

  answer(question: Question): string | null {
    return typeof question === 'string' ? this.argument(question) : question === KIND_QUESTION ? this.context.kind : this.field(question);
  }

  /** A top-level argument: a string as itself, another value as JSON text; null when absent. */
  argument(name: string): string | null {
    if (name === this.lastName) return this.lastArgument;
    const value = this.arguments()?.[name];
    this.lastName = name;
    this.lastArgument = value === undefined ? null : typeof value === 'string' ? value : JSON.stringify(value);
    return this.lastArgument;
  }

  /** `argument(name)` as UTF-16LE; empty when absent. */
  argumentUnits(name: string): Buffer {
    if (name !== this.unitsName) {
      this.units = Buffer.from(this.argument(name) ?? '', 'utf16le');
      this.unitsName = name;
    }
    return this.units;
  }

  /**
   * Whether a rule that judges only the commands of `programs` may find one in this call: always
   * for a request, a response, or a tool call whose input is raw text (code reaches its commands
   * through string literals and their escapes); for a tool call with JSON arguments, when one of
   * the names occurs in the texts its commands can come from (programs.ts).
   */
  mayRun(programs: Programs): boolean {
    if (this.context.kind !== 'tool_call') return true;
    this.mayRunAnswers ??= new Map();
    let answer = this.mayRunAnswers.get(programs);
    if (answer === undefined) {
      answer = this.mayRunNow(programs);
      this.mayRunAnswers.set(programs, answer);
    }
    return answer;
  }

  private mayRunNow(programs: Programs): boolean {
    const args = this.arguments();
    if (args === null) return true;
    const emitted = this.context.toolArguments!;
    if (programs.occurIn(emitted)) return true;
    if (this.derivedTexts === undefined) this.derivedTexts = derivedTexts(emitted, args);
    return this.derivedTexts === null || this.derivedTexts.some((text) => programs.occurIn(text));
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

/** The UTF-16 unit at byte `at` of `bytes` (the caller checked the bounds). */
function unitAt(bytes: Buffer, at: number): number {
  return bytes[at]! | (bytes[at + 1]! << 8);
}

/** Whether the UTF-16 units at `at` in `bytes` are those of `text` (the caller checked the bounds). */
function sameUnits(bytes: Buffer, at: number, text: string): boolean {
  for (let i = 0; i < text.length; i++, at += 2) {
    if (text.charCodeAt(i) !== unitAt(bytes, at)) return false;
  }
  return true;
}

/** An arena rule's started state: the memory below its heap's end, and the means to restore its globals. */
interface Arena {
  readonly image: Uint8Array;
  /** What copying the image back costs a call. */
  readonly rewindFuel: number;
  /**
   * Restores the globals and the tail above the watch line, and fills the fuel with `fuel` for the
   * next call (one call into the module instead of three); answers the fuel the call left times
   * two, plus 1 when the module wrote below the line since the last restore.
   */
  readonly restoreGlobals: (fuel: number) => number;
}

/** A rule that cannot be used: wrong ABI, missing exports, or it trapped while starting. */
export class RuleLoadError extends Error {}

interface RuleExports {
  svc_abi_version?: unknown;
  svc_kinds?: unknown;
  svc_evaluate?: unknown;
  memory?: WebAssembly.Memory;
  [metering: string]: unknown;
}

/**
 * One instantiated rule. Its host accessors read the current Subject; strings cross as UTF-16
 * written straight into the rule's memory, so a rule pays only for the fields it asks for.
 *
 * A metered module (it has the METERING_EXPORTS) gets `fuel` units for starting, for each of its
 * exports the host calls, and for each evaluation; the accessors charge the same fuel. A module
 * that is not metered runs unbounded (only tests run one).
 */
export class RuleInstance {
  private subject: Subject | null = null;
  private reason = '';
  private readonly memory: WebAssembly.Memory;
  private readonly evaluateFn: () => number;
  private readonly capBytes: number;
  private fuel: { readonly set: (units: number) => void; readonly get: () => number } | null = null;
  /**
   * Short strings read from the rule, by their address: the names it asks for arguments by. Each
   * stays one string, which V8 looks up as a property key without hashing it again.
   */
  private readonly shortTexts = new Map<number, string>();
  /** What the accessors have charged and not yet taken from the fuel. */
  private owed = 0;
  /** What the last call left of its fuel (below zero: it ran out). */
  private left = 0;
  /** A view of the memory, made again when a growth replaces (detaches) its buffer. */
  private view: Buffer = Buffer.alloc(0);
  private viewed = new ArrayBuffer(0);
  /** The KIND_BITS this rule evaluates. */
  readonly kinds: number;
  /** The programs whose commands it judges (its `svc_programs`); null when it judges every tool call. */
  readonly programs: Programs | null;
  /** An arena rule's state once started, put back after every call; null for any other rule. */
  private readonly arena: Arena | null = null;
  /** The accessors wrote into an arena rule's started state in this call (its own writes are watched by the module). */
  private hostWroteBelow = false;
  /** Below this address an arena rule's writes are watched (0 for any other rule). */
  private watchLine = 0;
  /** The verdicts of an arena rule that learns nothing but what the host answers; null for any other rule. */
  private readonly memo: VerdictMemo | null = null;
  /** The memo records what the rule asks (only while it evaluates a call, not while it starts). */
  private recording: VerdictMemo | null = null;

  constructor(
    module: WebAssembly.Module,
    declared: DeclaredMemory | null,
    memoryCapPages: number,
    private readonly budget: number,
  ) {
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
    const readUtf16 = (ptr: number, length: number) => {
      this.charge(length);
      const bytes = this.bytes();
      const end = ptr + length * 2;
      if (ptr < 0 || length < 0 || end > bytes.length) throw new RangeError(`a string at ${ptr} of ${length} units is outside the rule's memory`);
      if (length > SHORT_STRING) return bytes.toString('utf16le', ptr, end);
      // An argument's name, asked for by its length and then read, in this call or the next ones:
      // the string made for its address is answered while the same units stand there.
      const known = this.shortTexts.get(ptr);
      if (known !== undefined && known.length === length && sameUnits(bytes, ptr, known)) return known;
      let text = '';
      for (let at = ptr; at < end; at += 2) text += String.fromCharCode(unitAt(bytes, at));
      if (this.shortTexts.size >= MAX_SHORT_TEXTS) this.shortTexts.clear();
      this.shortTexts.set(ptr, text);
      return text;
    };
    /** Where the host writes `byteLength` bytes into the rule's memory at `dest`: they must lie within it. */
    const writable = (byteLength: number, dest: number) => {
      const bytes = this.bytes();
      if (dest < 0 || dest + byteLength > bytes.length) throw new RangeError(`${byteLength} bytes at ${dest} are outside the rule's memory`);
      if (dest < this.watchLine) this.hostWroteBelow = true;
      return bytes;
    };
    const writeUtf16 = (text: string, dest: number) => {
      this.charge(text.length);
      const length = text.length;
      const bytes = writable(length * 2, dest);
      if (length > SHORT_WRITE) {
        void bytes.write(text, dest, 'utf16le');
        return;
      }
      // A short string: storing its units here is faster than calling into the encoder.
      for (let i = 0, at = dest; i < length; i++, at += 2) {
        const unit = text.charCodeAt(i);
        bytes[at] = unit;
        bytes[at + 1] = unit >>> 8;
      }
    };
    const writeUnits = (units: Buffer, dest: number) => {
      this.charge(units.length >>> 1);
      writable(units.length, dest).set(units, dest);
    };
    const answer = (text: string | null) => {
      this.charge(0);
      return text?.length ?? -1;
    };
    const field = (id: number) => {
      const value = this.subject!.field(id);
      this.recording?.observe(id, value);
      return value;
    };
    const argument = (name: string) => {
      const value = this.subject!.argument(name);
      this.recording?.observe(name, value);
      return value;
    };
    const svc = {
      kind: () => {
        const kind = this.subject!.context.kind;
        this.recording?.observe(KIND_QUESTION, kind);
        return kind === 'request' ? 0 : kind === 'tool_call' ? 1 : 2;
      },
      field_length: (id: number) => answer(field(id)),
      field_read: (id: number, dest: number) => writeUtf16(field(id) ?? '', dest),
      argument_length: (namePtr: number, nameLength: number) => answer(argument(readUtf16(namePtr, nameLength))),
      argument_read: (namePtr: number, nameLength: number, dest: number) => {
        const name = readUtf16(namePtr, nameLength);
        argument(name);
        writeUnits(this.subject!.argumentUnits(name), dest);
      },
      set_reason: (ptr: number, length: number) => {
        this.reason = readUtf16(ptr, Math.min(length, MAX_REASON_CHARS));
      },
    };
    // The loader provides AssemblyScript's `env` imports; the exports are called as they are, not through its wrappers.
    let exports: RuleExports;
    try {
      exports = instantiateSync<Record<string, unknown>>(module, { svc, env }).instance.exports as RuleExports;
    } catch (err) {
      throw new RuleLoadError(`it cannot be instantiated: ${(err as Error).message}`);
    }
    const memory = exports.memory ?? (env.memory as WebAssembly.Memory | undefined);
    if (memory === undefined) throw new RuleLoadError('it has no memory');
    this.memory = memory;
    const { setFuel, getFuel, start } = METERING_EXPORTS;
    if (typeof exports[setFuel] === 'function' && typeof exports[getFuel] === 'function') {
      this.fuel = { set: exports[setFuel] as (units: number) => void, get: exports[getFuel] as () => number };
    }
    if (typeof exports[start] === 'function') {
      const startFn = exports[start] as () => void;
      this.refuel();
      try {
        startFn();
        if (this.owed > 0 && this.settle() < 0) throw new FuelExhaustedError('out of fuel');
      } catch (err) {
        throw new RuleLoadError(this.exhausted() ? `it ran out of fuel while starting (${this.budget} units) and was stopped` : `it trapped while starting: ${(err as Error).message}`);
      }
    }
    if (typeof exports.svc_abi_version !== 'function' || typeof exports.svc_evaluate !== 'function') {
      throw new RuleLoadError('it does not export svc_abi_version and svc_evaluate');
    }
    const version = this.start('svc_abi_version', exports.svc_abi_version as () => number);
    if (version !== ABI_VERSION) throw new RuleLoadError(`it speaks ABI version ${String(version)}; this host speaks ${ABI_VERSION}`);
    this.evaluateFn = exports.svc_evaluate as () => number;
    this.kinds = typeof exports.svc_kinds === 'function' ? this.start('svc_kinds', exports.svc_kinds as () => number) & ALL_KINDS : ALL_KINDS;
    const programs = exports[PROGRAMS_EXPORT];
    this.programs = typeof programs === 'function' ? this.declaredPrograms(programs as () => number) : null;
    this.arena = this.startArena(exports);
    if (this.arena !== null && importsAnswerOnlyTheHost(module)) this.memo = new VerdictMemo();
  }

  /** The names an `svc_programs` export answers: the string at the address it answers, as AssemblyScript lays one out. */
  private declaredPrograms(fn: () => number): Programs {
    const at = this.start(PROGRAMS_EXPORT, fn) >>> 0;
    const bytes = this.bytes();
    if (at < 4 || at > bytes.length) throw new RuleLoadError(`${PROGRAMS_EXPORT} answered ${at}, outside its memory (${bytes.length} bytes)`);
    const length = bytes.readUInt32LE(at - 4);
    if (length % 2 !== 0 || length > MAX_DECLARATION_BYTES || at + length > bytes.length) {
      throw new RuleLoadError(`${PROGRAMS_EXPORT} answered ${at}, where no UTF-16 string of at most ${MAX_DECLARATION_BYTES} bytes lies (its length reads ${length})`);
    }
    try {
      return declaredPrograms(bytes.toString('utf16le', at, at + length));
    } catch (err) {
      throw new RuleLoadError(`${PROGRAMS_EXPORT}: ${(err as Error).message}`);
    }
  }

  /**
   * For a metered rule built on the stub runtime (it exports ARENA_TOP_EXPORT): its memory below
   * the heap's end and its globals as they are now, once started, with the module's writes below
   * that end watched from now on. An unmetered module has no means to restore its globals and
   * keeps its state between calls.
   */
  private startArena(exports: RuleExports): Arena | null {
    const top = exports[ARENA_TOP_EXPORT];
    const { saveGlobals, restoreGlobals, watchBelow } = METERING_EXPORTS;
    const save = exports[saveGlobals];
    const restore = exports[restoreGlobals];
    const watch = exports[watchBelow];
    if (typeof top !== 'function' || this.fuel === null || typeof save !== 'function' || typeof restore !== 'function' || typeof watch !== 'function') return null;
    const end = this.start(ARENA_TOP_EXPORT, top as () => number) >>> 0;
    const bytes = this.bytes();
    if (end > bytes.length) throw new RuleLoadError(`${ARENA_TOP_EXPORT} answered ${end}, past the end of its memory (${bytes.length} bytes)`);
    (save as () => void)();
    const image = new Uint8Array(bytes.subarray(0, end));
    // The module puts back the last bytes itself: the first allocation of every call writes there,
    // and that alone should not cost a copy of the whole started state.
    const line = Math.max(0, end - UNWATCHED_TAIL_BYTES);
    (watch as (line: number) => void)(line);
    this.watchLine = line;
    // From now on the fuel of each call is filled as the call before it is rewound.
    this.fuel.set(this.budget);
    return { image, rewindFuel: (end >>> FUEL_PER_BYTES_SHIFT) + 1, restoreGlobals: restore as (fuel: number) => number };
  }

  /** Whether this instance is metered (then every call runs on a budget). */
  get metered(): boolean {
    return this.fuel !== null;
  }

  /** Calls answered from the verdicts it remembers (see verdict-memo.ts). */
  get remembered(): number {
    return this.memo?.answered ?? 0;
  }

  /** The fuel the last call spent (0 for a module that is not metered, or a verdict remembered). */
  get spent(): number {
    return this.fuel === null ? 0 : this.budget - Math.max(this.left, -1);
  }

  /** Runs the rule; throws when it traps (a growth refused at the memory cap is a trap), runs out of fuel or answers nonsense. */
  evaluate(subject: Subject): RuleOutcome {
    const memo = this.memo?.active() === true ? this.memo : null;
    let startBytes = 0;
    if (memo !== null) {
      const known = memo.recall(subject);
      if (known !== undefined) {
        this.left = this.budget;
        return known;
      }
      memo.begin();
      this.recording = memo;
      startBytes = this.bytes().length;
    }
    this.subject = subject;
    this.reason = '';
    // An arena rule's fuel was filled when its last call was rewound.
    if (this.arena === null) this.refuel();
    else this.owed = 0;
    let code: number;
    try {
      code = this.evaluateFn();
    } catch (err) {
      throw this.failure(err as Error);
    } finally {
      this.subject = null;
      this.recording = null;
    }
    this.finishCall();
    const outcome = this.outcomeOf(code);
    memo?.remember(outcome, startBytes, this.bytes().length);
    return outcome;
  }

  private outcomeOf(code: number): RuleOutcome {
    switch (code) {
      case VERDICT_CODES.allow:
        return ALLOWED;
      case VERDICT_CODES.block:
        return Object.freeze({ action: 'block', reason: this.reason || 'blocked by rule' });
      case VERDICT_CODES.hold:
        return Object.freeze({ action: 'hold', reason: this.reason || 'held by rule' });
      default:
        throw new Error(`svc_evaluate returned ${code}, which is not a verdict`);
    }
  }

  /**
   * After a call that returned: what it left of its fuel, less what the accessors charged and (for
   * an arena rule) what copying its started state back costs, as a memory.copy pays; throws when
   * that overdrew it.
   */
  private finishCall(): void {
    if (this.fuel === null) return;
    if (this.arena === null) this.left = this.fuel.get() - this.owed;
    else {
      // A call that returned paid on entering the rule, so what it left is below the budget (at
      // most MAX_FUEL) and twice that still fits the i32 the module answers.
      const answer = this.rewind(this.arena);
      this.left = (answer >> 1) - this.owed - ((answer & 1) === 0 ? 0 : this.arena.rewindFuel);
    }
    if (this.left < 0) throw this.outOfFuel();
  }

  /** Why a call that threw failed; the rule is put back first (an arena rule's fuel is read before rewinding refills it). */
  private failure(err: Error): Error {
    this.left = this.fuel === null ? 0 : this.fuel.get() - this.owed;
    if (this.arena !== null) this.rewind(this.arena);
    if (this.fuel !== null && this.left < 0) return this.outOfFuel();
    if (isStackOverflow(err)) return new Error(`it overflowed its stack: ${err.message}`);
    // A grow refused at the cap surfaces as a trap; the memory in use tells the two apart.
    return new Error(`it trapped with ${this.memory.buffer.byteLength} of its ${this.capBytes} memory bytes in use: ${err.message}`);
  }

  private outOfFuel(): FuelExhaustedError {
    return new FuelExhaustedError(`it ran out of fuel (${this.budget} units) and was stopped`);
  }

  /** Calls an export while loading: a trap or running out of fuel means the rule cannot be used. */
  private start(name: string, fn: () => number): number {
    this.refuel();
    try {
      const answer = fn();
      if (this.owed > 0 && this.settle() < 0) throw new FuelExhaustedError('out of fuel');
      return answer;
    } catch (err) {
      throw new RuleLoadError(this.exhausted() ? `${name} ran out of fuel (${this.budget} units) and was stopped` : `${name} trapped: ${(err as Error).message}`);
    }
  }

  /**
   * Puts an arena rule back as it was once started: what a call allocated or changed is gone. Its
   * globals and the allocator's tail are restored after every call; its started state is copied
   * back only when the call wrote into it. Answers the fuel the call left, times two, plus 1 when
   * it copied.
   */
  private rewind(arena: Arena): number {
    const answer = arena.restoreGlobals(this.budget);
    if ((answer & 1) === 0 && !this.hostWroteBelow) return answer;
    this.hostWroteBelow = false;
    this.bytes().set(arena.image, 0);
    return answer | 1;
  }

  private bytes(): Buffer {
    // A detached buffer has no bytes: cheaper to ask than the memory's current buffer.
    if (this.viewed.byteLength === 0) {
      this.viewed = this.memory.buffer;
      this.view = Buffer.from(this.viewed);
    }
    return this.view;
  }

  private refuel(): void {
    this.owed = 0;
    this.fuel?.set(this.budget);
  }

  /** Whether the fuel ran out: the rule's own code took it below zero, or the accessors' charges did. */
  private exhausted(): boolean {
    return this.fuel !== null && (this.settle() as number) < 0;
  }

  /** Takes what the accessors owe from the fuel; answers what is left. */
  private settle(): number {
    const left = this.fuel!.get() - this.owed;
    this.owed = 0;
    this.fuel!.set(Math.max(left, -1));
    return left;
  }

  /**
   * What an accessor costs, from the same fuel as the rule's own code. Charges are added up and
   * taken from the fuel once they reach SETTLE_EVERY (and when the call ends): the fuel global is
   * slower to reach from here than a number.
   */
  private charge(chars: number): void {
    if (this.fuel === null) return;
    this.owed += HOST_CALL_FUEL + (chars >>> HOST_FUEL_PER_CHARS_SHIFT);
    if (this.owed >= SETTLE_EVERY && this.settle() < 0) throw new FuelExhaustedError('out of fuel');
  }
}
