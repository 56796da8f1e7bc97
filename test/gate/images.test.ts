import t from 'tap';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkCommand, checkImages, checkWrittenManifest, imageAllowlistSchema, imagesInManifest, loadAllowlist, parseImageReference } from '../../src/gate/images.js';

const DIGEST = `sha256:${'a'.repeat(64)}`;
const OTHER = `sha256:${'b'.repeat(64)}`;
const policy = imageAllowlistSchema.parse({ registries_allowed: ['ghcr.io/acme/'], images: { 'ghcr.io/acme/api': { approved_digests: [DIGEST] } } });
const code = (refs: string[]) => checkImages(refs, policy).code;

t.test('every refusal code of the image tier', async (t) => {
  t.equal(code([`ghcr.io/acme/api@${DIGEST}`]), null);
  t.equal(code([`ghcr.io/acme/api:1.4.2@${DIGEST}`]), null, 'a tag beside an approved digest');
  t.equal(code(['ghcr.io/acme/api:latest']), 'E_UNPINNED_LATEST');
  t.equal(code(['ghcr.io/acme/api']), 'E_UNPINNED_LATEST', 'no tag means latest');
  t.equal(code(['docker.io/library/nginx:1.27']), 'E_UNKNOWN_REGISTRY');
  t.equal(code([`ghcr.io/acme/worker@${DIGEST}`]), 'E_UNKNOWN_IMAGE');
  t.equal(code(['ghcr.io/acme/api:1.4.2']), 'E_UNPINNED_TAG');
  t.equal(code([`ghcr.io/acme/api@${OTHER}`]), 'E_DIGEST_MISMATCH');
  t.equal(code(['not an image!']), 'E_MANIFEST_UNPARSEABLE');
  t.equal(checkImages(['ghcr.io/acme/api:1.4.2'], { ...policy, require_digest: false }).ok, true, 'a tag passes when digests are not required');
  t.same(parseImageReference('localhost:5000/team/app:v1'), { repository: 'localhost:5000/team/app', tag: 'v1', digest: null });
});

t.test('deploy commands: inline images, named manifests, a missing allowlist', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'svc-images-'));
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  writeFileSync(join(root, 'pinned.yaml'), `spec:\n  containers:\n    - name: api\n      image: ghcr.io/acme/api@${DIGEST}\n`);
  writeFileSync(join(root, 'tagged.yaml'), 'spec:\n  containers:\n    - image: "ghcr.io/acme/api:1.4.2"\n');
  t.equal((await checkCommand('kubectl apply -f pinned.yaml', root, policy)).ok, true);
  t.equal((await checkCommand('kubectl apply -f tagged.yaml', root, policy)).code, 'E_UNPINNED_TAG');
  t.equal((await checkCommand('kubectl apply -f missing.yaml', root, policy)).code, 'E_MANIFEST_UNPARSEABLE');
  t.equal((await checkCommand('gcloud run deploy api --image=ghcr.io/acme/api:1.4.2', root, policy)).code, 'E_UNPINNED_TAG');
  t.equal((await checkCommand(`kubectl set image deploy/api api=ghcr.io/acme/api@${DIGEST}`, root, policy)).ok, true);
  t.equal((await checkCommand('docker compose up -d', root, null)).code, 'E_MANIFEST_UNPARSEABLE', 'no allowlist: a deploy fails closed');
  t.equal((await checkCommand('ls -la', root, null)).ok, true, 'not a deploy: nothing to check');
  t.equal(checkWrittenManifest('image: ghcr.io/acme/api:latest', policy).code, 'E_UNPINNED_LATEST');
  writeFileSync(join(root, 'allow.json'), JSON.stringify({ images: {} }));
  t.match(await loadAllowlist('allow.json', root), { require_digest: true, registries_allowed: [], images: {} });
  writeFileSync(join(root, 'broken.json'), '{');
  t.equal(await loadAllowlist('broken.json', root), null);
});

t.test('image keys are read line by line, also after long runs of blanks', async (t) => {
  t.same(imagesInManifest('spec:\n  containers:\n    -\n      image: nginx:1.27\n    - image: "redis:7"\n'), ['nginx:1.27', 'redis:7']);
  // `^\s*-?\s*` crossed lines and split a run of blanks two ways: these took quadratic time.
  t.same(imagesInManifest(`${'\n'.repeat(200_000)}image: alpine:3`), ['alpine:3']);
  t.same(imagesInManifest(`${'\t'.repeat(200_000)}x`), []);
});
