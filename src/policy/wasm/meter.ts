import binaryen from 'binaryen';
import { FUEL_PER_BYTES_SHIFT, METERING_EXPORTS, UNWATCHED_TAIL_BYTES } from './fuel.js';

/**
 * Instruction metering of a rule module with binaryen (loaded only where modules are metered: the
 * metering process, never the process that runs rules). The metered module has a mutable i32 global, its
 * fuel, which the host sets and reads through two exported functions; its start function is
 * exported too (and no longer runs by itself, so the host can give it fuel first). It pays:
 *
 * - on entering a function, the number of instructions of its body outside any loop;
 * - on entering a loop and on every branch back to it, the number of instructions of the loop's
 *   body outside the loops nested in it;
 * - before `memory.copy`, `memory.fill` and `memory.init`, one unit per 16 bytes (plus one).
 *
 * A straight-line stretch of code runs each of its instructions at most once per payment, so the
 * fuel spent bounds the instructions run. A function that cannot be part of a recursion (no cycle
 * of direct calls reaches it back, it is not in a table, the host does not call it) pays nothing
 * on entry: each direct call to it pays its cost instead, as part of the caller's stretch, which
 * saves the payment on entering small helpers called in hot loops. When the fuel drops below
 * zero the module traps (`unreachable`); the host tells that trap from the rule's own by reading
 * the fuel back.
 *
 * Every write to memory (a store, a SIMD lane store, and the destination of `memory.copy`,
 * `memory.fill` and `memory.init`) is watched too: one whose address is below a line the host
 * draws sets a flag, which the host reads and clears when it restores the module's globals. The
 * host draws the line at the end of an arena rule's started state, so it copies that state back
 * only after a call that wrote into it. The check is not metered: it is a constant few
 * instructions per write, and the write itself is.
 */

/** A module that cannot be metered, and so cannot be run. */
export class RuleMeteringError extends Error {}

/**
 * The features a rule may use: those whose every instruction is metered above or runs in constant
 * time. Left out: threads (`memory.atomic.wait` blocks), exception handling (a rule could catch
 * the host's refusal), reference types and GC (table and array bulk operations), and the rest.
 */
const METERED_FEATURES =
  binaryen.Features.MutableGlobals |
  binaryen.Features.NontrappingFPToInt |
  binaryen.Features.SIMD128 |
  binaryen.Features.BulkMemory |
  binaryen.Features.BulkMemoryOpt |
  binaryen.Features.SignExt |
  binaryen.Features.Multivalue |
  binaryen.Features.ExtendedConst |
  binaryen.Features.TailCall;

const FUEL = 'svc$fuel';
const PAY_BYTES = 'svc$fuel_bytes';
/** Writes below this address set WRITTEN (0, nothing is below, until the host draws the line). */
const WATCH_LINE = 'svc$watch_line';
const WRITTEN = 'svc$written_below';
/** The bytes at the watch line when it was drawn, and whether there were any to keep. */
const TAIL_LOW = 'svc$tail_low';
const TAIL_HIGH = 'svc$tail_high';
const TAIL_KEPT = 'svc$tail_kept';
/** One payment never takes more than this, so the i32 fuel cannot wrap below zero between checks. */
const MAX_PAYMENT = 1 << 24;
/** A function whose calls would cost more than this pays on entry instead. */
const MAX_FOLDED_COST = 32;

type Ref = number;

/** The expression and function accessors binaryen.js has but its typings leave out. */
interface Accessors {
  readonly Loop: { getBody(loop: Ref): Ref; setBody(loop: Ref, body: Ref): void };
  readonly MemoryCopy: SizedAccessor;
  readonly MemoryFill: SizedAccessor;
  readonly MemoryInit: SizedAccessor;
  readonly Function: { getBody(fn: binaryen.FunctionRef): Ref; setBody(fn: binaryen.FunctionRef, body: Ref): void };
  readonly Call: { getTarget(call: Ref): string };
  readonly Store: { getPtr(store: Ref): Ref; setPtr(store: Ref, ptr: Ref): void };
  readonly SIMDLoadStoreLane: { isStore(expr: Ref): boolean; getPtr(expr: Ref): Ref; setPtr(expr: Ref, ptr: Ref): void };
}
interface SizedAccessor {
  getSize(expr: Ref): Ref;
  setSize(expr: Ref, size: Ref): void;
  getDest(expr: Ref): Ref;
  setDest(expr: Ref, dest: Ref): void;
}
const api = binaryen as unknown as Accessors;
/** binaryen's C API: adds a local to a function, answering its index (binaryen.js has no wrapper). */
const addVar = (binaryen as unknown as { _BinaryenFunctionAddVar(fn: binaryen.FunctionRef, type: binaryen.Type): number })._BinaryenFunctionAddVar;

const Id = {
  Nop: binaryen.NopId,
  Block: binaryen.BlockId,
  If: binaryen.IfId,
  Loop: binaryen.LoopId,
  Break: binaryen.BreakId,
  Switch: binaryen.SwitchId,
  Call: binaryen.CallId,
  CallIndirect: binaryen.CallIndirectId,
  LocalGet: binaryen.LocalGetId,
  LocalSet: binaryen.LocalSetId,
  GlobalGet: binaryen.GlobalGetId,
  GlobalSet: binaryen.GlobalSetId,
  Load: binaryen.LoadId,
  Store: binaryen.StoreId,
  SIMDExtract: binaryen.SIMDExtractId,
  SIMDReplace: binaryen.SIMDReplaceId,
  SIMDShuffle: binaryen.SIMDShuffleId,
  SIMDTernary: binaryen.SIMDTernaryId,
  SIMDShift: binaryen.SIMDShiftId,
  SIMDLoad: binaryen.SIMDLoadId,
  SIMDLoadStoreLane: binaryen.SIMDLoadStoreLaneId,
  MemoryInit: binaryen.MemoryInitId,
  DataDrop: binaryen.DataDropId,
  MemoryCopy: binaryen.MemoryCopyId,
  MemoryFill: binaryen.MemoryFillId,
  Const: binaryen.ConstId,
  Unary: binaryen.UnaryId,
  Binary: binaryen.BinaryId,
  Select: binaryen.SelectId,
  Drop: binaryen.DropId,
  Return: binaryen.ReturnId,
  MemorySize: binaryen.MemorySizeId,
  MemoryGrow: binaryen.MemoryGrowId,
  Unreachable: binaryen.UnreachableId,
  TupleMake: binaryen.TupleMakeId,
  TupleExtract: binaryen.TupleExtractId,
} as const;

type Getter = (expr: Ref) => Ref;
const wrappers = binaryen as unknown as Record<string, Record<string, Getter>>;

/** For an expression kind, the binaryen getters of its child expressions. */
function childGetters(kind: string, ...fields: string[]): Getter[] {
  return fields.map((f) => wrappers[kind]![`get${f}`]!);
}
const LEAF: Getter[] = [];
const CHILDREN = new Map<number, Getter[] | 'operands' | 'block'>([
  [Id.Nop, LEAF],
  [Id.LocalGet, LEAF],
  [Id.GlobalGet, LEAF],
  [Id.Const, LEAF],
  [Id.Unreachable, LEAF],
  [Id.MemorySize, LEAF],
  [Id.DataDrop, LEAF],
  [Id.Block, 'block'],
  [Id.Call, 'operands'],
  [Id.TupleMake, 'operands'],
  [Id.CallIndirect, 'operands'],
  [Id.If, childGetters('If', 'Condition', 'IfTrue', 'IfFalse')],
  [Id.Loop, childGetters('Loop', 'Body')],
  [Id.Break, childGetters('Break', 'Condition', 'Value')],
  [Id.Switch, childGetters('Switch', 'Condition', 'Value')],
  [Id.LocalSet, childGetters('LocalSet', 'Value')],
  [Id.GlobalSet, childGetters('GlobalSet', 'Value')],
  [Id.Unary, childGetters('Unary', 'Value')],
  [Id.Drop, childGetters('Drop', 'Value')],
  [Id.Return, childGetters('Return', 'Value')],
  [Id.Load, childGetters('Load', 'Ptr')],
  [Id.SIMDLoad, childGetters('SIMDLoad', 'Ptr')],
  [Id.Store, childGetters('Store', 'Ptr', 'Value')],
  [Id.Binary, childGetters('Binary', 'Left', 'Right')],
  [Id.SIMDShuffle, childGetters('SIMDShuffle', 'Left', 'Right')],
  [Id.Select, childGetters('Select', 'IfTrue', 'IfFalse', 'Condition')],
  [Id.MemoryGrow, childGetters('MemoryGrow', 'Delta')],
  [Id.SIMDExtract, childGetters('SIMDExtract', 'Vec')],
  [Id.SIMDReplace, childGetters('SIMDReplace', 'Vec', 'Value')],
  [Id.SIMDTernary, childGetters('SIMDTernary', 'A', 'B', 'C')],
  [Id.SIMDShift, childGetters('SIMDShift', 'Vec', 'Shift')],
  [Id.SIMDLoadStoreLane, childGetters('SIMDLoadStoreLane', 'Ptr', 'Vec')],
  [Id.MemoryInit, childGetters('MemoryInit', 'Dest', 'Offset', 'Size')],
  [Id.MemoryCopy, childGetters('MemoryCopy', 'Dest', 'Source', 'Size')],
  [Id.MemoryFill, childGetters('MemoryFill', 'Dest', 'Value', 'Size')],
  [Id.TupleExtract, childGetters('TupleExtract', 'Tuple')],
]);
const OPERANDS: Record<number, string> = { [Id.Call]: 'Call', [Id.TupleMake]: 'TupleMake', [Id.CallIndirect]: 'CallIndirect' };

/** Pushes the expressions directly under `expr` (of kind `id`) onto `out`, for the instructions of the metered features. */
function pushChildren(expr: Ref, id: number, out: Ref[]): void {
  const getters = CHILDREN.get(id);
  if (getters === undefined) throw new RuleMeteringError(`it uses an instruction svc cannot meter (binaryen expression ${id})`);
  if (getters === 'block') {
    const count = wrappers.Block!.getNumChildren!(expr);
    for (let i = 0; i < count; i++) out.push((wrappers.Block!.getChildAt as unknown as (e: Ref, i: number) => Ref)(expr, i));
    return;
  }
  if (getters === 'operands') {
    const kind = wrappers[OPERANDS[id]!]!;
    const count = kind.getNumOperands!(expr);
    for (let i = 0; i < count; i++) out.push((kind.getOperandAt as unknown as (e: Ref, i: number) => Ref)(expr, i));
    if (id === Id.CallIndirect) out.push(kind.getTarget!(expr));
    return;
  }
  for (const get of getters) {
    const child = get(expr);
    if (child !== 0) out.push(child);
  }
}

/** The accessor of a bulk memory operation (`memory.copy`, `memory.fill`, `memory.init`); null for any other expression. */
function bulkOperation(id: number): SizedAccessor | null {
  return id === Id.MemoryCopy ? api.MemoryCopy : id === Id.MemoryFill ? api.MemoryFill : id === Id.MemoryInit ? api.MemoryInit : null;
}

class Meter {
  /** What a call to a function that does not pay on entry costs its caller. */
  readonly folded = new Map<string, number>();
  /** The function being metered, and the local its watched writes keep their address in (added on its first write). */
  private fn: binaryen.FunctionRef = 0 as binaryen.FunctionRef;
  private scratch = -1;

  constructor(private readonly mod: binaryen.Module) {}

  /** Meters a function's body (see straightLine) and watches its writes. */
  body(fn: binaryen.FunctionRef): number {
    this.fn = fn;
    this.scratch = -1;
    return this.straightLine(api.Function.getBody(fn));
  }

  /** `fuel -= units; if (fuel < 0) unreachable`, in steps of at most MAX_PAYMENT. */
  pay(units: number): Ref {
    const m = this.mod;
    const fuel = () => m.global.get(FUEL, binaryen.i32);
    const steps: Ref[] = [];
    for (let left = units; left > 0 || steps.length === 0; left -= MAX_PAYMENT) {
      steps.push(m.global.set(FUEL, m.i32.sub(fuel(), m.i32.const(Math.min(left, MAX_PAYMENT)))), m.if(m.i32.lt_s(fuel(), m.i32.const(0)), m.unreachable()));
    }
    return m.block(null, steps, binaryen.none);
  }

  /**
   * Meters the loops inside `expr` and answers the instructions of `expr` outside them: what one
   * pass over this straight-line stretch may run.
   */
  private straightLine(root: Ref): number {
    let units = 0;
    const stack: Ref[] = [root];
    while (stack.length > 0) {
      const expr = stack.pop()!;
      units++;
      const id = binaryen.getExpressionId(expr);
      if (id === Id.Loop) {
        const body = api.Loop.getBody(expr);
        api.Loop.setBody(expr, this.mod.block(null, [this.pay(this.straightLine(body) + 1), body], binaryen.auto));
        continue;
      }
      if (id === Id.Call) units += this.folded.get(api.Call.getTarget(expr)) ?? 0;
      const bulk = bulkOperation(id);
      if (bulk !== null) this.payForBytes(expr, bulk);
      pushChildren(expr, id, stack);
      // After its children are taken: the check wraps the address and is itself left unmetered.
      this.watchWrite(expr, id, bulk);
    }
    return units;
  }

  /** Wraps the address a write writes at in the check against the watch line. */
  private watchWrite(expr: Ref, id: number, bulk: SizedAccessor | null): void {
    if (bulk !== null) bulk.setDest(expr, this.watched(bulk.getDest(expr)));
    else if (id === Id.Store) api.Store.setPtr(expr, this.watched(api.Store.getPtr(expr)));
    else if (id === Id.SIMDLoadStoreLane && api.SIMDLoadStoreLane.isStore(expr)) api.SIMDLoadStoreLane.setPtr(expr, this.watched(api.SIMDLoadStoreLane.getPtr(expr)));
  }

  /**
   * `address`, after `if (address <u line) written = 1`. Comparing the base address alone is safe:
   * a write's offset only moves it up, so a base at or above the line writes nothing below it.
   */
  private watched(address: Ref): Ref {
    const m = this.mod;
    if (this.scratch < 0) this.scratch = addVar(this.fn, binaryen.i32);
    const below = m.i32.lt_u(m.local.tee(this.scratch, address, binaryen.i32), m.global.get(WATCH_LINE, binaryen.i32));
    return m.block(null, [m.if(below, m.global.set(WRITTEN, m.i32.const(1))), m.local.get(this.scratch, binaryen.i32)], binaryen.i32);
  }

  private payForBytes(expr: Ref, bulk: SizedAccessor): void {
    bulk.setSize(expr, this.mod.call(PAY_BYTES, [bulk.getSize(expr)], binaryen.i32));
  }

  /** `(param $bytes i32) (result i32)`: pays for touching `bytes` bytes and answers them. */
  addBytesPayment(): void {
    const m = this.mod;
    const fuel = () => m.global.get(FUEL, binaryen.i32);
    const units = m.i32.add(m.i32.shr_u(m.local.get(0, binaryen.i32), m.i32.const(FUEL_PER_BYTES_SHIFT)), m.i32.const(1));
    m.addFunction(
      PAY_BYTES,
      binaryen.i32,
      binaryen.i32,
      [],
      m.block(null, [m.global.set(FUEL, m.i32.sub(fuel(), units)), m.if(m.i32.lt_s(fuel(), m.i32.const(0)), m.unreachable()), m.local.get(0, binaryen.i32)], binaryen.i32),
    );
  }
}

/** binaryen reports validation problems on the console; they are kept for the error instead. */
function quietly<T>(fn: () => T): { value: T; said: string } {
  let said = '';
  const streams = [process.stdout, process.stderr];
  const writes = streams.map((s) => s.write);
  for (const s of streams) {
    s.write = ((chunk: string | Uint8Array) => ((said += chunk.toString()), true)) as typeof s.write;
  }
  try {
    return { value: fn(), said };
  } finally {
    streams.forEach((s, i) => (s.write = writes[i]!));
  }
}

/** The functions each defined function calls directly. */
function directCalls(body: Ref): Set<string> {
  const callees = new Set<string>();
  const stack: Ref[] = [body];
  while (stack.length > 0) {
    const expr = stack.pop()!;
    const id = binaryen.getExpressionId(expr);
    if (id === Id.Call) callees.add(api.Call.getTarget(expr));
    pushChildren(expr, id, stack);
  }
  return callees;
}

/** The functions that are part of a cycle of direct calls (Tarjan's strongly connected components, without recursion). */
function recursive(calls: ReadonlyMap<string, ReadonlySet<string>>): Set<string> {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const out = new Set<string>();
  let next = 0;
  for (const root of calls.keys()) {
    if (index.has(root)) continue;
    const work: Array<{ fn: string; callees: Iterator<string> }> = [];
    const enter = (fn: string) => {
      index.set(fn, next);
      low.set(fn, next++);
      stack.push(fn);
      onStack.add(fn);
      work.push({ fn, callees: (calls.get(fn) ?? new Set<string>()).values() });
    };
    enter(root);
    while (work.length > 0) {
      const top = work.at(-1)!;
      const step = top.callees.next();
      if (!step.done) {
        const callee = step.value;
        if (!calls.has(callee)) continue;
        if (!index.has(callee)) enter(callee);
        else if (onStack.has(callee)) low.set(top.fn, Math.min(low.get(top.fn)!, index.get(callee)!));
        continue;
      }
      work.pop();
      if (work.length > 0) {
        const parent = work.at(-1)!.fn;
        low.set(parent, Math.min(low.get(parent)!, low.get(top.fn)!));
      }
      if (low.get(top.fn) === index.get(top.fn)) {
        const component: string[] = [];
        let member: string;
        do {
          member = stack.pop()!;
          onStack.delete(member);
          component.push(member);
        } while (member !== top.fn);
        if (component.length > 1 || calls.get(top.fn)!.has(top.fn)) for (const c of component) out.add(c);
      }
    }
  }
  return out;
}

/** Functions something other than a direct call may enter: the host (exports, start) or call_indirect (tables). */
function enteredFromOutside(mod: binaryen.Module): Set<string> {
  const names = new Set<string>();
  for (let i = 0; i < mod.getNumExports(); i++) {
    const info = binaryen.getExportInfo(mod.getExportByIndex(i));
    if (info.kind === binaryen.ExternalFunction) names.add(info.value);
  }
  for (let i = 0; i < mod.getNumElementSegments(); i++) {
    for (const name of binaryen.getElementSegmentInfo(mod.getElementSegmentByIndex(i)).data) names.add(name);
  }
  const start = mod.getStart();
  if (start !== 0) names.add(binaryen.getFunctionInfo(start).name);
  return names;
}

/** The module's own mutable globals (not imported ones), before the fuel is added. */
function ownMutableGlobals(mod: binaryen.Module): binaryen.GlobalInfo[] {
  const out: binaryen.GlobalInfo[] = [];
  for (let i = 0; i < mod.getNumGlobals(); i++) {
    const info = binaryen.getGlobalInfo(mod.getGlobalByIndex(i));
    if (info.mutable && !info.module) out.push(info);
  }
  return out;
}

function zero(mod: binaryen.Module, type: binaryen.Type): Ref {
  if (type === binaryen.i32) return mod.i32.const(0);
  if (type === binaryen.i64) return mod.i64.const(0n);
  if (type === binaryen.f32) return mod.f32.const(0);
  if (type === binaryen.f64) return mod.f64.const(0);
  return mod.v128.const(new Array<number>(16).fill(0));
}

/**
 * Exported functions that copy each of `globals` into a shadow global and back (not metered: the
 * host calls them between a rule's calls, and they are as long as the module has globals).
 *
 * Drawing the watch line also keeps the UNWATCHED_TAIL_BYTES from the line up (the host draws
 * the line that far below the end of the started state), and restoring puts them back, so a call
 * whose only write there is the allocator's needs no copy from the host. Memory too small to hold
 * them has no started state above the line to keep.
 */
function addGlobalsSnapshot(mod: binaryen.Module, globals: readonly binaryen.GlobalInfo[]): void {
  const save: Ref[] = [];
  const restore: Ref[] = [];
  globals.forEach((global, i) => {
    const shadow = `svc$saved_global${i}`;
    mod.addGlobal(shadow, global.type, true, zero(mod, global.type));
    save.push(mod.global.set(shadow, mod.global.get(global.name, global.type)));
    restore.push(mod.global.set(global.name, mod.global.get(shadow, global.type)));
  });
  mod.addFunction('svc$save_globals', binaryen.none, binaryen.none, [], mod.block(null, save, binaryen.none));
  mod.addFunctionExport('svc$save_globals', METERING_EXPORTS.saveGlobals);
  const line = () => mod.global.get(WATCH_LINE, binaryen.i32);
  const tail = [TAIL_LOW, TAIL_HIGH];
  for (const name of tail) mod.addGlobal(name, binaryen.i64, true, zero(mod, binaryen.i64));
  mod.addGlobal(TAIL_KEPT, binaryen.i32, true, zero(mod, binaryen.i32));
  // Restoring answers the fuel the call left, doubled, plus 1 when memory below the watch line was
  // written since the last restore (and forgets it); then it fills the fuel with its argument for
  // the next call and puts the tail back.
  const fuel = mod.global.get(FUEL, binaryen.i32);
  const answer = mod.i32.or(mod.i32.shl(fuel, mod.i32.const(1)), mod.global.get(WRITTEN, binaryen.i32));
  const putTailBack = mod.if(
    mod.global.get(TAIL_KEPT, binaryen.i32),
    mod.block(null, tail.map((name, i) => mod.i64.store(i * 8, 1, line(), mod.global.get(name, binaryen.i64))), binaryen.none),
  );
  restore.push(mod.global.set(WRITTEN, mod.i32.const(0)), mod.global.set(FUEL, mod.local.get(0, binaryen.i32)), putTailBack);
  const body = mod.block(null, [mod.local.set(1, answer), ...restore, mod.local.get(1, binaryen.i32)], binaryen.i32);
  mod.addFunction('svc$restore_globals', binaryen.i32, binaryen.i32, [binaryen.i32], body);
  mod.addFunctionExport('svc$restore_globals', METERING_EXPORTS.restoreGlobals);
  const memoryBytes = mod.i64.shl(mod.i64.extend_u(mod.memory.size()), mod.i64.const(16n));
  const fits = mod.i64.le_u(mod.i64.add(mod.i64.extend_u(line()), mod.i64.const(BigInt(UNWATCHED_TAIL_BYTES))), memoryBytes);
  const keepTail = mod.block(null, [...tail.map((name, i) => mod.global.set(name, mod.i64.load(i * 8, 1, line()))), mod.global.set(TAIL_KEPT, mod.i32.const(1))], binaryen.none);
  const watch = [mod.global.set(WATCH_LINE, mod.local.get(0, binaryen.i32)), mod.global.set(WRITTEN, mod.i32.const(0)), mod.global.set(TAIL_KEPT, mod.i32.const(0)), mod.if(fits, keepTail)];
  mod.addFunction('svc$watch_below', binaryen.i32, binaryen.none, [], mod.block(null, watch, binaryen.none));
  mod.addFunctionExport('svc$watch_below', METERING_EXPORTS.watchBelow);
}

function firstLine(text: string): string {
  const line = text.split('\n').find((l) => l.trim() !== '') ?? '';
  return line.trim().slice(0, 300);
}

/**
 * The metered form of a module. Throws RuleMeteringError when binaryen cannot read it, it uses a
 * feature that is not metered, or it already imports the fuel.
 */
export function meterModule(bytes: Uint8Array): Uint8Array {
  let mod: binaryen.Module;
  try {
    mod = quietly(() => binaryen.readBinary(bytes)).value;
  } catch (err) {
    throw new RuleMeteringError(`binaryen cannot read it (${(err as Error).message})`);
  }
  try {
    mod.setFeatures(METERED_FEATURES);
    const checked = quietly(() => mod.validate());
    if (!checked.value) {
      throw new RuleMeteringError(`binaryen does not accept it with the features svc meters: ${firstLine(checked.said) || 'it does not validate'}`);
    }
    for (const name of Object.values(METERING_EXPORTS)) {
      if (mod.getExport(name) !== 0) throw new RuleMeteringError(`it exports ${name}, a name the host reserves`);
    }
    const defined = new Map<string, binaryen.FunctionRef>();
    for (let i = 0; i < mod.getNumFunctions(); i++) {
      const fn = mod.getFunctionByIndex(i);
      const info = binaryen.getFunctionInfo(fn);
      if (!info.module && api.Function.getBody(fn) !== 0) defined.set(info.name, fn);
    }
    const globals = ownMutableGlobals(mod);
    const calls = new Map([...defined].map(([name, fn]) => [name, directCalls(api.Function.getBody(fn))]));
    const paysOnEntry = new Set([...recursive(calls), ...enteredFromOutside(mod)]);
    mod.addGlobal(FUEL, binaryen.i32, true, mod.i32.const(0));
    mod.addGlobal(WATCH_LINE, binaryen.i32, true, mod.i32.const(0));
    mod.addGlobal(WRITTEN, binaryen.i32, true, mod.i32.const(0));
    const start = mod.getStart();
    if (start !== 0) {
      mod.addFunctionExport(binaryen.getFunctionInfo(start).name, METERING_EXPORTS.start);
      mod.setStart(0 as binaryen.FunctionRef);
    }
    const meter = new Meter(mod);
    // Callees first: a function's cost includes the cost of the functions it calls that do not pay on entry.
    const done = new Set<string>();
    const meterFunction = (root: string) => {
      const work: Array<{ fn: string; callees: Iterator<string> }> = [{ fn: root, callees: calls.get(root)!.values() }];
      done.add(root);
      while (work.length > 0) {
        const top = work.at(-1)!;
        const step = top.callees.next();
        if (!step.done) {
          const callee = step.value;
          if (defined.has(callee) && !done.has(callee) && !paysOnEntry.has(callee)) {
            done.add(callee);
            work.push({ fn: callee, callees: calls.get(callee)!.values() });
          }
          continue;
        }
        work.pop();
        const fn = defined.get(top.fn)!;
        const units = meter.body(fn);
        if (paysOnEntry.has(top.fn) || units > MAX_FOLDED_COST) api.Function.setBody(fn, mod.block(null, [meter.pay(units), api.Function.getBody(fn)], binaryen.auto));
        else meter.folded.set(top.fn, units);
      }
    };
    for (const name of defined.keys()) if (!done.has(name)) meterFunction(name);
    meter.addBytesPayment();
    // Added after the walk: the host's own accessors of the fuel are not metered.
    mod.addFunction('svc$set_fuel', binaryen.i32, binaryen.none, [], mod.global.set(FUEL, mod.local.get(0, binaryen.i32)));
    mod.addFunctionExport('svc$set_fuel', METERING_EXPORTS.setFuel);
    mod.addFunction('svc$get_fuel', binaryen.none, binaryen.i32, [], mod.global.get(FUEL, binaryen.i32));
    mod.addFunctionExport('svc$get_fuel', METERING_EXPORTS.getFuel);
    addGlobalsSnapshot(mod, globals);
    const metered = quietly(() => mod.validate());
    if (!metered.value) throw new RuleMeteringError(`its metered form does not validate: ${firstLine(metered.said)}`);
    return mod.emitBinary();
  } finally {
    mod.dispose();
  }
}
