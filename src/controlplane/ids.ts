import { ulid } from '../lib/ids.js';

/** Opaque, time-sortable ids, one prefix per resource. */
export const newId = {
  workspace: () => 'ws_' + ulid(),
  user: () => 'usr_' + ulid(),
  member: () => 'mem_' + ulid(),
  session: () => 'ses_' + ulid(),
  key: () => 'key_' + ulid(),
  gateway: () => 'gw_' + ulid(),
  policy: () => 'pol_' + ulid(),
  wasmRule: () => 'wr_' + ulid(),
};
