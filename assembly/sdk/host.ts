// The host accessors of ABI version 1 (imported from the "svc" module).

/** 0 request, 1 tool_call, 2 response. */
@external("svc", "kind")
export declare function hostKind(): i32;

/** Length in UTF-16 code units of a context field, or -1 when it is absent. */
@external("svc", "field_length")
export declare function hostFieldLength(field: i32): i32;

/** Copies a context field as UTF-16 into `dest` (which has room for `field_length` code units). */
@external("svc", "field_read")
export declare function hostFieldRead(field: i32, dest: usize): void;

/** Length of one top-level argument of the tool call (`name` is UTF-16 at `namePtr`), or -1. */
@external("svc", "argument_length")
export declare function hostArgumentLength(namePtr: usize, nameLength: i32): i32;

/** Copies that argument as UTF-16 into `dest`: a string as itself, any other value as JSON text. */
@external("svc", "argument_read")
export declare function hostArgumentRead(namePtr: usize, nameLength: i32, dest: usize): void;

/** Records the reason of a block or hold (UTF-16 at `ptr`). */
@external("svc", "set_reason")
export declare function hostSetReason(ptr: usize, length: i32): void;
