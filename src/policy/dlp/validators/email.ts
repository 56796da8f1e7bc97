import { domainToASCII } from 'node:url';
import { publicSuffixes } from './libraries.js';
import { AT, isWordByte } from '../bytes.js';
import type { Candidate, Finding, Validator } from './validator.js';

const CONFIDENCE = 0.95;
const MAX_LOCAL_LENGTH = 64;
const MAX_HOST_LENGTH = 253;
/** RFC 5321: a path holds at most 256 characters, two of them the angle brackets. */
const MAX_ADDRESS_LENGTH = 254;
const HOST_LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/i;
const TLDTS_OPTIONS = { extractHostname: false, validateHostname: false, allowPrivateDomains: false } as const;

/**
 * Email addresses whose host ends in an ICANN public suffix: `user@localhost`, `x@y.invalidtld`
 * and `icon@2x.png` are refused, as are SCP-style `git@github.com:org/repo` remotes and
 * fediverse handles. Internationalised hosts (`user@bücher.de`) are judged in their ASCII
 * form. The candidate is the `@host` part; the local part is read backwards from the `@`, so
 * the finding starts before the candidate.
 */
export function createEmailValidator(): Validator {
  // Loaded now, with the policy, rather than by the first address a request holds.
  publicSuffixes();
  const validate = (candidate: Candidate): Finding | undefined => {
    const { text, bytes, start } = candidate;
    const localStart = localPartStart(bytes, start);
    const end = trimmedEnd(text);
    if (localStart === undefined || start - localStart + end > MAX_ADDRESS_LENGTH || continuesAfter(bytes, start + end)) return undefined;
    if (!isLocalPart(bytes.toString('latin1', localStart, start))) return undefined;
    const hostEnd = publicHostEnd(candidate, end);
    return hostEnd === 0 ? undefined : { start: localStart - start, end: hostEnd, confidence: CONFIDENCE };
  };
  return { maxConfidence: CONFIDENCE, reachesBack: true, validate };
}

/**
 * Where the local part before the `@` at `at` starts: the run of local-part characters before
 * it, if there is one, it is at most 64 characters long and no other `@` precedes it
 * (`@jane@mastodon.social` is a handle).
 */
function localPartStart(bytes: Buffer, at: number): number | undefined {
  let start = at;
  while (start > 0 && at - start <= MAX_LOCAL_LENGTH && isLocalByte(bytes[start - 1])) start--;
  if (start === at || at - start > MAX_LOCAL_LENGTH || bytes[start - 1] === AT) return undefined;
  return start;
}

/** The candidate pattern lets the host end in dots and hyphens (`mail me at a@b.com.`); they are not part of it. */
function trimmedEnd(text: string): number {
  let end = text.length;
  while (text[end - 1] === '.' || text[end - 1] === '-') end--;
  return end;
}

/** Letters, digits and `._%+-`: the local parts this detector knows (no quoted ones). */
function isLocalByte(byte: number | undefined): boolean {
  return isWordByte(byte) || byte === 0x2e || byte === 0x25 || byte === 0x2b || byte === 0x2d;
}

function isLocalPart(local: string): boolean {
  return !local.startsWith('.') && !local.endsWith('.') && !local.includes('..');
}

/**
 * Where the longest public host after the `@` ends (an offset in the candidate), or 0 when there
 * is none: the whole host, else the host without the labels that ran on after it when text follows
 * an address without a space (`mail ops@example.com.Thanks`).
 */
function publicHostEnd({ text, bytes, start }: Candidate, end: number): number {
  for (let hostEnd = end; hostEnd > 1; hostEnd = text.lastIndexOf('.', hostEnd - 1)) {
    if (isPublicHost(bytes.toString('utf8', start + 1, start + hostEnd))) return hostEnd;
  }
  return 0;
}

function isPublicHost(written: string): boolean {
  // Non-ASCII hosts in punycode; `domainToASCII` returns '' for what no host can be.
  const host = /^[\x00-\x7f]*$/.test(written) ? written : domainToASCII(written);
  if (host.length === 0 || host.length > MAX_HOST_LENGTH || !host.split('.').every((label) => HOST_LABEL.test(label))) return false;
  const parsed = publicSuffixes().parse(host.toLowerCase(), TLDTS_OPTIONS);
  return parsed.isIcann === true && parsed.domain !== null && parsed.isIp !== true;
}

/** Glued to what follows: a word character (`a@b.com_x`), another `@`, or an SCP path (`host:org/repo`). */
function continuesAfter(bytes: Uint8Array, end: number): boolean {
  const after = bytes[end];
  if (after === AT || isWordByte(after)) return true;
  return after === 0x3a && (isWordByte(bytes[end + 1]) || bytes[end + 1] === 0x2f || bytes[end + 1] === 0x7e);
}
