/**
 * Runs `fn` with `JSON.parse` counted, and answers what it returned and how many texts it parsed
 * that `counted` accepts (every one by default). `JSON.parse` is put back however `fn` ends.
 */
export async function countingParses<T>(fn: () => T | Promise<T>, counted: (text: string) => boolean = () => true): Promise<{ result: T; parses: number }> {
  const parse = JSON.parse;
  let parses = 0;
  JSON.parse = ((text: string, reviver?: Parameters<typeof JSON.parse>[1]) => {
    if (typeof text === 'string' && counted(text)) parses++;
    return parse(text, reviver);
  }) as typeof JSON.parse;
  try {
    return { result: await fn(), parses };
  } finally {
    JSON.parse = parse;
  }
}
