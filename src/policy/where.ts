import RE2 from 're2';

/**
 * The WHERE clause of a SOP rule: a condition over a tool call's arguments, e.g.
 *
 *   command CONTAINS 'prod' AND NOT (branch IN ('dev', 'staging'))
 *   path STARTS WITH '/etc/' OR path MATCHES '\.pem$'
 *   args.count > 100
 *
 * A field is a dotted path into the tool's input (`tool` is the tool's name); values are quoted
 * strings, numbers, true, false or null. Operators: =, !=, <, <=, >, >= (numbers), CONTAINS,
 * STARTS WITH, ENDS WITH (text, case-insensitive), MATCHES (a linear-time RE2 expression), IN (…),
 * IS NULL, IS NOT NULL; AND binds tighter than OR; NOT and parentheses. A field that is absent is
 * null: it equals nothing, contains nothing and matches nothing.
 */

export type WhereNode =
  | { readonly kind: 'and' | 'or'; readonly left: WhereNode; readonly right: WhereNode }
  | { readonly kind: 'not'; readonly operand: WhereNode }
  | { readonly kind: 'compare'; readonly field: readonly string[]; readonly op: Operator; readonly value: Scalar | readonly Scalar[]; readonly pattern?: RE2 };

type Scalar = string | number | boolean | null;
type Operator = '=' | '!=' | '<' | '<=' | '>' | '>=' | 'CONTAINS' | 'STARTS WITH' | 'ENDS WITH' | 'MATCHES' | 'IN' | 'IS NULL' | 'IS NOT NULL';

export class WhereSyntaxError extends Error {}

const MAX_CLAUSE = 2000;
const MAX_DEPTH = 32;

type Token = { kind: 'word' | 'string' | 'number' | 'punct'; text: string; at: number };

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (/\s/.test(c)) {
      i++;
    } else if (c === "'" || c === '"') {
      let value = '';
      let j = i + 1;
      for (; j < text.length; j++) {
        if (text[j] === c) {
          if (text[j + 1] === c) {
            value += c;
            j++;
            continue;
          }
          break;
        }
        value += text[j];
      }
      if (j >= text.length) throw new WhereSyntaxError(`an unterminated string at ${i}`);
      tokens.push({ kind: 'string', text: value, at: i });
      i = j + 1;
    } else if (/[0-9-]/.test(c) && /^-?\d/.test(text.slice(i))) {
      const m = /^-?\d+(?:\.\d+)?/.exec(text.slice(i))!;
      tokens.push({ kind: 'number', text: m[0], at: i });
      i += m[0].length;
    } else if (/[A-Za-z_]/.test(c)) {
      const m = /^[A-Za-z_][A-Za-z0-9_.]*/.exec(text.slice(i))!;
      tokens.push({ kind: 'word', text: m[0], at: i });
      i += m[0].length;
    } else {
      const m = /^(<=|>=|!=|<>|[=<>(),])/.exec(text.slice(i));
      if (m === null) throw new WhereSyntaxError(`unexpected '${c}' at ${i}`);
      tokens.push({ kind: 'punct', text: m[0] === '<>' ? '!=' : m[0], at: i });
      i += m[0].length;
    }
  }
  return tokens;
}

/** Parses a WHERE clause; throws WhereSyntaxError saying where it stops reading. */
export function parseWhere(text: string): WhereNode {
  if (text.length > MAX_CLAUSE) throw new WhereSyntaxError(`a clause is at most ${MAX_CLAUSE} characters`);
  const tokens = tokenize(text);
  let at = 0;
  const peek = () => tokens[at];
  const keyword = (word: string) => peek()?.kind === 'word' && peek()!.text.toUpperCase() === word;
  const expect = (text: string) => {
    const t = tokens[at];
    if (t?.text !== text) throw new WhereSyntaxError(`expected '${text}' ${t === undefined ? 'at the end' : `at ${t.at}`}`);
    at++;
  };
  const value = (): Scalar => {
    const t = tokens[at++];
    if (t === undefined) throw new WhereSyntaxError('a value is missing at the end');
    if (t.kind === 'string') return t.text;
    if (t.kind === 'number') return Number(t.text);
    if (t.kind === 'word' && /^(true|false|null)$/i.test(t.text)) return t.text.toLowerCase() === 'null' ? null : t.text.toLowerCase() === 'true';
    throw new WhereSyntaxError(`expected a value at ${t.at}`);
  };
  const comparison = (): WhereNode => {
    const t = tokens[at++];
    if (t?.kind !== 'word') throw new WhereSyntaxError(t === undefined ? 'a condition is missing at the end' : `expected a field at ${t.at}`);
    const field = t.text.split('.');
    const next = tokens[at];
    if (next === undefined) throw new WhereSyntaxError(`an operator is missing after ${t.text}`);
    if (next.kind === 'punct' && ['=', '!=', '<', '<=', '>', '>='].includes(next.text)) {
      at++;
      return { kind: 'compare', field, op: next.text as Operator, value: value() };
    }
    const word = next.kind === 'word' ? next.text.toUpperCase() : '';
    at++;
    if (word === 'CONTAINS' || word === 'MATCHES') {
      const v = value();
      if (word === 'MATCHES') {
        if (typeof v !== 'string') throw new WhereSyntaxError(`MATCHES needs a quoted expression at ${next.at}`);
        try {
          return { kind: 'compare', field, op: 'MATCHES', value: v, pattern: new RE2(v) };
        } catch (err) {
          throw new WhereSyntaxError(`the expression after MATCHES does not compile: ${(err as Error).message}`);
        }
      }
      return { kind: 'compare', field, op: 'CONTAINS', value: v };
    }
    if ((word === 'STARTS' || word === 'ENDS') && keyword('WITH')) {
      at++;
      return { kind: 'compare', field, op: word === 'STARTS' ? 'STARTS WITH' : 'ENDS WITH', value: value() };
    }
    if (word === 'IN') {
      expect('(');
      const values: Scalar[] = [value()];
      while (peek()?.text === ',') {
        at++;
        values.push(value());
      }
      expect(')');
      return { kind: 'compare', field, op: 'IN', value: values };
    }
    if (word === 'IS') {
      const negated = keyword('NOT');
      if (negated) at++;
      if (!keyword('NULL')) throw new WhereSyntaxError(`expected NULL at ${peek()?.at ?? 'the end'}`);
      at++;
      return { kind: 'compare', field, op: negated ? 'IS NOT NULL' : 'IS NULL', value: null };
    }
    throw new WhereSyntaxError(`unknown operator '${next.text}' at ${next.at}`);
  };
  const factor = (depth: number): WhereNode => {
    if (depth > MAX_DEPTH) throw new WhereSyntaxError('the clause nests too deeply');
    if (keyword('NOT')) {
      at++;
      return { kind: 'not', operand: factor(depth + 1) };
    }
    if (peek()?.text === '(') {
      at++;
      const inner = or(depth + 1);
      expect(')');
      return inner;
    }
    return comparison();
  };
  const and = (depth: number): WhereNode => {
    let left = factor(depth);
    while (keyword('AND')) {
      at++;
      left = { kind: 'and', left, right: factor(depth) };
    }
    return left;
  };
  const or = (depth: number): WhereNode => {
    let left = and(depth);
    while (keyword('OR')) {
      at++;
      left = { kind: 'or', left, right: and(depth) };
    }
    return left;
  };
  const tree = or(0);
  if (at < tokens.length) throw new WhereSyntaxError(`unexpected '${tokens[at]!.text}' at ${tokens[at]!.at}`);
  return tree;
}

function fieldValue(call: { tool: string; input: unknown }, path: readonly string[]): unknown {
  if (path.length === 1 && path[0] === 'tool') return call.tool;
  let node: unknown = call.input;
  for (const key of path[0] === 'args' && path.length > 1 ? path.slice(1) : path) {
    if (node === null || typeof node !== 'object') return null;
    node = (node as Record<string, unknown>)[key];
  }
  return node === undefined ? null : node;
}

const text = (v: unknown) => (v === null ? null : typeof v === 'string' ? v : typeof v === 'object' ? JSON.stringify(v) : String(v));

/** Whether the call meets the clause. */
export function matchesWhere(node: WhereNode, call: { tool: string; input: unknown }): boolean {
  switch (node.kind) {
    case 'and':
      return matchesWhere(node.left, call) && matchesWhere(node.right, call);
    case 'or':
      return matchesWhere(node.left, call) || matchesWhere(node.right, call);
    case 'not':
      return !matchesWhere(node.operand, call);
    case 'compare': {
      const actual = fieldValue(call, node.field);
      const op = node.op;
      if (op === 'IS NULL') return actual === null;
      if (op === 'IS NOT NULL') return actual !== null;
      if (actual === null) return op === '!=' && node.value !== null;
      if (op === 'IN') return (node.value as Scalar[]).some((v) => text(v) === text(actual));
      const want = node.value as Scalar;
      if (op === '=') return text(want) === text(actual);
      if (op === '!=') return text(want) !== text(actual);
      if (op === '<' || op === '<=' || op === '>' || op === '>=') {
        const a = Number(actual);
        const b = Number(want);
        if (!Number.isFinite(a) || !Number.isFinite(b)) return false;
        return op === '<' ? a < b : op === '<=' ? a <= b : op === '>' ? a > b : a >= b;
      }
      const haystack = text(actual)!;
      if (op === 'MATCHES') return node.pattern!.test(haystack);
      const needle = (text(want) ?? '').toLowerCase();
      const lower = haystack.toLowerCase();
      return op === 'CONTAINS' ? lower.includes(needle) : op === 'STARTS WITH' ? lower.startsWith(needle) : lower.endsWith(needle);
    }
  }
}
