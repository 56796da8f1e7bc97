import type { DeviceReport } from '../../config/inventory-report.js';

/** Seed 002 "Inventory harness status", computed on every read from the latest report and the time. */
export type HarnessStatus = 'Ungoverned' | 'Gate stale' | 'Unverified' | 'Governed';

const HOUR = 3_600_000;
const STALE_AFTER = 48 * HOUR;
export const NOT_REPORTING_AFTER = 72 * HOUR;

type Harness = DeviceReport['harnesses'][number];

export function harnessStatus(h: Harness, machineDisconnected: boolean, now: number): { status: HarnessStatus; reason: string } {
  const age = (at: string | null) => (at === null ? Infinity : now - Date.parse(at));
  if (machineDisconnected || h.disconnected) return { status: 'Ungoverned', reason: 'disconnected' };
  if (h.gateKind === 'none') return { status: 'Ungoverned', reason: h.connectConfigured ? 'connected and gate file missing' : 'no tool-call hook a gate can attach to, or no gate installed' };
  if (h.gateKind === 'hook' && !h.gateFileOnDisk) return { status: 'Ungoverned', reason: 'connected and gate file missing' };
  if (age(h.lastGuardsDisabledAt) < STALE_AFTER) return { status: 'Ungoverned', reason: 'the gate ran with guards disabled in the last 48 hours' };
  const installedFor = age(h.gateInstalledAt);
  const lastEvent = age(h.lastGateEventAt);
  if (h.gateKind !== 'hook' && h.lastGateEventAt === null) return { status: 'Unverified', reason: 'the gate runs outside a hook file and no event has reached the machine' };
  if (h.lastGateEventAt === null && installedFor < HOUR) return { status: 'Unverified', reason: 'gate installed less than an hour ago, no event yet' };
  if (lastEvent >= STALE_AFTER) return { status: 'Gate stale', reason: 'no gate event in the last 48 hours' };
  return { status: 'Governed', reason: 'gate installed, guards on, an event in the last 48 hours' };
}

/** CSV with formula injection defused: a cell starting with =, +, -, @, a tab or a carriage return gets a leading single quote. */
export function toCsv(header: readonly string[], rows: ReadonlyArray<ReadonlyArray<unknown>>): string {
  const cell = (value: unknown) => {
    let s = value === null || value === undefined ? '' : typeof value === 'object' ? JSON.stringify(value) : String(value);
    if (/^[=+\-@\t\r]/.test(s)) s = `'${s}`;
    return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
  };
  return [header, ...rows].map((r) => r.map(cell).join(',')).join('\r\n') + '\r\n';
}
