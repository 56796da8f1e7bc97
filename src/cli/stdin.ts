/** Everything on stdin as text, or null when it is longer than `maxBytes` (the rest is not read into memory). */
export async function readStdin(maxBytes: number): Promise<string | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of process.stdin as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) return null;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** A password or key given on stdin (`echo … | svc …`): the text without its final newline. */
export async function readSecretFromStdin(): Promise<string> {
  return ((await readStdin(64 * 1024)) ?? '').replace(/\r?\n$/, '');
}
