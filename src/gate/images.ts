import { readFile } from 'node:fs/promises';
import { isAbsolute, resolve } from 'node:path';
import { z } from 'zod';
import { isDeploy, simpleCommands } from './commands.js';
import type { GateRefusalCode } from './refusals.js';

/**
 * Image integrity (seed 002 tier 5): on a deploy command every image it names — inline, or in a
 * manifest the command names (`-f`, `--filename`, `--values`, `--file`) — must be pinned to a digest
 * the allowlist approves. Fails closed: no readable allowlist, or a named manifest that cannot be
 * read, refuses the command.
 */

export const imageAllowlistSchema = z.object({
  require_digest: z.boolean().default(true),
  /** Repository prefixes (`ghcr.io/acme/`); empty allows any registry. */
  registries_allowed: z.array(z.string().min(1)).default([]),
  images: z.record(z.string().min(1), z.object({ approved_digests: z.array(z.string().regex(/^sha256:[0-9a-f]{64}$/)).default([]) })).default({}),
});
export type ImageAllowlist = z.infer<typeof imageAllowlistSchema>;

export type ImageCode = Extract<GateRefusalCode, `E_${string}`>;

export interface ImageCheck {
  readonly ok: boolean;
  readonly code: ImageCode | null;
  readonly detail: string;
  /** Every image reference the check read. */
  readonly images: readonly string[];
}

export interface ImageReference {
  readonly repository: string;
  readonly tag: string | null;
  readonly digest: string | null;
}

const REFERENCE = /^((?:[a-z0-9]+(?:[._-][a-z0-9]+)*(?::\d+)?\/)*[a-z0-9]+(?:[._-][a-z0-9]+)*)(?::([\w][\w.-]{0,127}))?(?:@(sha256:[0-9a-f]{64}))?$/;

/** `ghcr.io/acme/api:1.2@sha256:…` → repository, tag, digest; null for something that is not an image reference. */
export function parseImageReference(text: string): ImageReference | null {
  const m = REFERENCE.exec(text.trim());
  if (m === null) return null;
  return { repository: m[1]!, tag: m[2] ?? null, digest: m[3] ?? null };
}

/** Checks parsed references against the allowlist; the first failing reference decides. */
export function checkImages(references: readonly string[], policy: ImageAllowlist): ImageCheck {
  for (const text of references) {
    const ref = parseImageReference(text);
    if (ref === null) return { ok: false, code: 'E_MANIFEST_UNPARSEABLE', detail: `'${text}' is not an image reference`, images: references };
    if (ref.digest === null && (ref.tag === null || ref.tag === 'latest')) {
      return { ok: false, code: 'E_UNPINNED_LATEST', detail: `${text} is deployed by the floating latest tag; pin it to an approved digest`, images: references };
    }
    if (policy.registries_allowed.length > 0 && !policy.registries_allowed.some((prefix) => ref.repository.startsWith(prefix))) {
      return { ok: false, code: 'E_UNKNOWN_REGISTRY', detail: `${ref.repository} is not from a registry the allowlist names (${policy.registries_allowed.join(', ')})`, images: references };
    }
    const approved = policy.images[ref.repository];
    if (approved === undefined) return { ok: false, code: 'E_UNKNOWN_IMAGE', detail: `${ref.repository} is not in the image allowlist`, images: references };
    if (ref.digest === null) {
      if (policy.require_digest) return { ok: false, code: 'E_UNPINNED_TAG', detail: `${text} names a tag where a digest is required`, images: references };
      continue;
    }
    if (!approved.approved_digests.includes(ref.digest)) return { ok: false, code: 'E_DIGEST_MISMATCH', detail: `${ref.repository}@${ref.digest} is not an approved digest`, images: references };
  }
  return { ok: true, code: null, detail: references.length === 0 ? 'no image named' : `${references.length} image(s) pinned to approved digests`, images: references };
}

/** The `image:` values of a manifest (Kubernetes, Compose, Helm values, Nomad, …). */
export function imagesInManifest(text: string): string[] {
  const out: string[] = [];
  // Blanks before the key are a line's own: `^\s*-?\s*` also crossed lines and split runs of
  // blanks two ways, which made a long run of blank lines or tabs take quadratic time.
  for (const m of text.matchAll(/^[ \t]*(?:-[ \t]*)?["']?image["']?\s*[:=]\s*["']?([^\s"'#,}]+)/gim)) out.push(m[1]!);
  return out;
}

/** Checks the images a manifest (the text an agent is about to write, or one on disk) names. */
export function checkWrittenManifest(text: string, policy: ImageAllowlist): ImageCheck {
  return checkImages(imagesInManifest(text), policy);
}

const MANIFEST_FLAGS = new Set(['-f', '--filename', '--file', '--values', '--compose-file', '-c']);
const IMAGE_FLAGS = new Set(['--image', '--docker-image', '--image-uri']);

/** The image references a command names inline and the manifest files it names. */
function referencesOf(command: string): { inline: string[]; manifests: string[] } {
  const inline: string[] = [];
  const manifests: string[] = [];
  for (const words of simpleCommands(command)) {
    const program = words[0]!;
    for (let i = 1; i < words.length; i++) {
      const word = words[i]!;
      const [flag, attached] = word.includes('=') && word.startsWith('-') ? [word.slice(0, word.indexOf('=')), word.slice(word.indexOf('=') + 1)] : [word, undefined];
      const value = attached ?? words[i + 1];
      if (IMAGE_FLAGS.has(flag) && value !== undefined) inline.push(value);
      else if (MANIFEST_FLAGS.has(flag) && value !== undefined && value !== '-') manifests.push(value);
      else if (flag === '--set' && value !== undefined && /(^|\.)image(\.repository)?=/.test(value)) inline.push(value.slice(value.indexOf('=') + 1));
      else continue;
      if (attached === undefined) i++;
    }
    // `kubectl set image deploy/api api=ghcr.io/acme/api:1.2`, `docker push ghcr.io/acme/api:1.2`
    if (program === 'kubectl' && words.includes('set') && words.includes('image')) {
      for (const w of words.slice(words.indexOf('image') + 2)) if (w.includes('=') && !w.startsWith('-')) inline.push(w.slice(w.indexOf('=') + 1));
    }
    if ((program === 'docker' || program === 'podman') && (words[1] === 'push' || words[1] === 'run')) {
      const ref = words.slice(2).find((w) => !w.startsWith('-'));
      if (ref !== undefined) inline.push(ref);
    }
  }
  return { inline, manifests };
}

/** Reads the allowlist (relative paths from repoRoot); null when it is missing or unreadable. */
export async function loadAllowlist(path: string, repoRoot: string): Promise<ImageAllowlist | null> {
  try {
    return imageAllowlistSchema.parse(JSON.parse(await readFile(isAbsolute(path) ? path : resolve(repoRoot, path), 'utf8')));
  } catch {
    return null;
  }
}

/**
 * The image tier for one command: ok for a command that does not deploy; for one that does, every
 * image it names inline or in the manifests it names must pass `checkImages`.
 */
export async function checkCommand(command: string, repoRoot: string, policy: ImageAllowlist | null): Promise<ImageCheck> {
  if (!isDeploy(command)) return { ok: true, code: null, detail: 'not a deploy command', images: [] };
  if (policy === null) return { ok: false, code: 'E_MANIFEST_UNPARSEABLE', detail: 'a deploy command needs the image allowlist, and it is missing or unreadable', images: [] };
  const { inline, manifests } = referencesOf(command);
  const images = [...inline];
  for (const file of manifests) {
    try {
      images.push(...imagesInManifest(await readFile(isAbsolute(file) ? file : resolve(repoRoot, file), 'utf8')));
    } catch {
      return { ok: false, code: 'E_MANIFEST_UNPARSEABLE', detail: `the manifest ${file} the command names cannot be read`, images };
    }
  }
  return checkImages(images, policy);
}
