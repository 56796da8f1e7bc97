// Compiled into every rule `svc policy compile` builds, as a second entry file. The rule is built
// on AssemblyScript's stub runtime, whose heap only grows; exporting `svc_arena_top` tells the host
// so, and where the heap ends once the module has started. The host then puts the module back as it
// was after starting at the end of every call (its memory up to that point and its globals), so a
// call costs no allocator or collector work and no call sees what an earlier one left behind.

/** Where the heap ends: the next allocation's address. */
export function svc_arena_top(): usize {
  // 0 is the stub runtime (shared/runtime): any other frees, and its heap cannot be put back this way.
  if (ASC_RUNTIME != 0) ERROR("svc_arena_top needs the stub runtime (--runtime stub)");
  const next = __alloc(0);
  __free(next);
  return next;
}
