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
  hold: () => 'hold_' + ulid(),
  incident: () => 'inc_' + ulid(),
  hookEvent: () => 'hev_' + ulid(),
  event: () => 'evt_' + ulid(),
  notificationRule: () => 'nr_' + ulid(),
  delivery: () => 'dlv_' + ulid(),
  siemDestination: () => 'siem_' + ulid(),
  siemEntry: () => 'sq_' + ulid(),
  device: () => 'dev_' + ulid(),
  org: () => 'org_' + ulid(),
  team: () => 'team_' + ulid(),
};
