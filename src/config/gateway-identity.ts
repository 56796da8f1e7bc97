import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { dirname } from 'node:path';
import { request } from 'undici';
import { ConfigError } from '../lib/errors.js';

/** The gateway a `gwt_<ulid>.<secret>` gateway token names; undefined for any other key. */
export function gatewayOfToken(apiKey: string): string | undefined {
  const match = /^gwt_([0-9A-HJKMNP-TV-Z]{26})\./.exec(apiKey);
  return match === null ? undefined : `gw_${match[1]}`;
}

/**
 * The gateway this proxy syncs as: the one its gateway token names, else the one given, else the
 * one registered earlier for this control plane (remembered in `file`), else a new registration
 * named after the host (needs an OWNER or ADMIN key).
 */
export async function resolveGatewayId(opts: { given: string | undefined; controlPlaneUrl: string; apiKey: string; file: string }): Promise<string> {
  const ofToken = gatewayOfToken(opts.apiKey);
  if (ofToken !== undefined) {
    if (opts.given !== undefined && opts.given !== ofToken) throw new ConfigError(`the gateway token belongs to gateway ${ofToken}, not ${opts.given}`);
    return ofToken;
  }
  if (opts.given !== undefined) return opts.given;
  const remembered = await readFile(opts.file, 'utf8').then(
    (text) => (JSON.parse(text) as Record<string, string>)[opts.controlPlaneUrl],
    () => undefined,
  );
  if (remembered !== undefined) return remembered;
  const res = await request(`${opts.controlPlaneUrl}/api/v1/gateways`, {
    method: 'POST',
    headers: { authorization: `Bearer ${opts.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: hostname().slice(0, 128) || 'proxy' }),
    headersTimeout: 5000,
    bodyTimeout: 5000,
  }).catch((err: unknown) => {
    throw new ConfigError(`cannot register a gateway: the control plane is unreachable (${(err as Error).message}); pass --gateway-id`);
  });
  const body = (await res.body.json()) as { id?: string; error?: { message?: string } };
  if (res.statusCode !== 201 || typeof body.id !== 'string') {
    throw new ConfigError(`cannot register a gateway (${res.statusCode}: ${body.error?.message ?? 'no id'}); pass --gateway-id or use an OWNER or ADMIN key`);
  }
  await mkdir(dirname(opts.file), { recursive: true, mode: 0o700 });
  const known = await readFile(opts.file, 'utf8').then((text) => JSON.parse(text) as Record<string, string>, () => ({}));
  await writeFile(opts.file, JSON.stringify({ ...known, [opts.controlPlaneUrl]: body.id }, null, 2) + '\n', { mode: 0o600 });
  return body.id;
}
