import { chmod, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { gatewayConfigDocumentSchema, type GatewayConfigDocument } from './sync-document.js';

/**
 * The last config a proxy applied from the control plane, kept so a restart while the control
 * plane is unreachable serves with it. It holds provider credentials: written 0600, atomically.
 */
export class LastGoodConfig {
  constructor(readonly file: string) {}

  async save(document: GatewayConfigDocument): Promise<void> {
    await mkdir(dirname(this.file), { recursive: true, mode: 0o700 });
    const temp = `${this.file}.${process.pid}.tmp`;
    await writeFile(temp, JSON.stringify({ savedAt: new Date().toISOString(), document }) + '\n', { mode: 0o600 });
    await chmod(temp, 0o600);
    await rename(temp, this.file);
  }

  /** The saved document, or undefined when there is none or it no longer validates. */
  async load(): Promise<{ document: GatewayConfigDocument; savedAt: string } | undefined> {
    let text: string;
    try {
      text = await readFile(this.file, 'utf8');
    } catch {
      return undefined;
    }
    try {
      const saved = JSON.parse(text) as { savedAt?: unknown; document?: unknown };
      const document = gatewayConfigDocumentSchema.safeParse(saved.document);
      return document.success ? { document: document.data, savedAt: String(saved.savedAt) } : undefined;
    } catch {
      return undefined;
    }
  }
}
