// Loads binaryen's one 14 MB ES module as it is: it needs no transform, and tsx's load hook takes
// about 24 s and 1.6 GB on it (each metering process of a test that loads WASM rules imports it).
import { readFile } from 'node:fs/promises';

export async function load(url, context, nextLoad) {
  if (url.endsWith('/node_modules/binaryen/index.js')) return { format: 'module', source: await readFile(new URL(url)), shortCircuit: true };
  return nextLoad(url, context);
}
