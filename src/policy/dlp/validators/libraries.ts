import { createRequire } from 'node:module';
import type { MetadataJson } from 'libphonenumber-js/core';

/**
 * The libraries behind the phone and email validators, loaded when such a validator first needs
 * one: a process spends about 100 ms loading libphonenumber's metadata and the public suffix list,
 * and the default policy (card, IBAN, SSN) uses neither, so a hook, an MCP wrapper or a proxy on
 * it starts without them. Required, not imported: validators are made and run synchronously.
 */
const require = createRequire(import.meta.url);

/** libphonenumber's functions, each taking the metadata (its CommonJS `max` build has no `Metadata` class). */
export interface PhoneNumbers {
  readonly core: typeof import('libphonenumber-js/core');
  readonly metadata: MetadataJson;
}

let phone: PhoneNumbers | undefined;
let suffixes: typeof import('tldts') | undefined;

export function phoneNumbers(): PhoneNumbers {
  return (phone ??= { core: require('libphonenumber-js/core') as PhoneNumbers['core'], metadata: require('libphonenumber-js/metadata.max.json') as MetadataJson });
}

export function publicSuffixes(): typeof import('tldts') {
  return (suffixes ??= require('tldts') as typeof import('tldts'));
}
