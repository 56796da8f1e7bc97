/** The memory a WebAssembly module declares: imported (`env.memory`) or its own. */
export interface DeclaredMemory {
  readonly imported: boolean;
  readonly minPages: number;
  readonly maxPages: number | null;
}

class Reader {
  offset = 0;
  constructor(private readonly bytes: Uint8Array) {}
  byte(): number {
    if (this.offset >= this.bytes.length) throw new Error('truncated module');
    return this.bytes[this.offset++]!;
  }
  leb(): number {
    let result = 0;
    let shift = 0;
    for (;;) {
      const b = this.byte();
      result += (b & 0x7f) * 2 ** shift;
      if ((b & 0x80) === 0) return result;
      shift += 7;
    }
  }
  skip(n: number): void {
    this.offset += n;
  }
  limits(): { min: number; max: number | null } {
    const flags = this.byte();
    const min = this.leb();
    return { min, max: (flags & 1) !== 0 ? this.leb() : null };
  }
}

const IMPORT_SECTION = 2;
const MEMORY_SECTION = 5;

/**
 * Reads the memory limits from a module's import or memory section, without instantiating it
 * (instantiation runs code, which the main thread never does). Null when it has no memory.
 */
export function declaredMemory(bytes: Uint8Array): DeclaredMemory | null {
  const r = new Reader(bytes);
  r.skip(8); // magic and version
  while (r.offset < bytes.length) {
    const id = r.byte();
    const size = r.leb();
    const end = r.offset + size;
    if (id === IMPORT_SECTION) {
      const count = r.leb();
      for (let i = 0; i < count; i++) {
        r.skip(r.leb());
        r.skip(r.leb());
        const kind = r.byte();
        if (kind === 0) r.leb();
        else if (kind === 1) {
          r.byte();
          r.limits();
        } else if (kind === 2) {
          const { min, max } = r.limits();
          return { imported: true, minPages: min, maxPages: max };
        } else if (kind === 3) r.skip(2);
        else throw new Error(`unknown import kind ${kind}`);
      }
    } else if (id === MEMORY_SECTION) {
      if (r.leb() === 0) return null;
      const { min, max } = r.limits();
      return { imported: false, minPages: min, maxPages: max };
    }
    r.offset = end;
  }
  return null;
}
