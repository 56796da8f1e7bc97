/**
 * The `when` expression of a decide rule: question names joined by `and`, `or`, `not` and
 * parentheses. Parsed by a small recursive-descent parser into a tree (never evaluated as code)
 * and evaluated in three-valued (Kleene) logic, where an unknown answer stays unknown unless the
 * other side settles the result.
 */

export type Answer = 'yes' | 'no' | 'unknown';
export type Truth = true | false | 'unknown';

export type WhenExpr =
  | { readonly kind: 'name'; readonly name: string }
  | { readonly kind: 'not'; readonly operand: WhenExpr }
  | { readonly kind: 'and' | 'or'; readonly left: WhenExpr; readonly right: WhenExpr };

export class WhenSyntaxError extends Error {
  constructor(
    message: string,
    readonly column: number,
  ) {
    super(`${message} (column ${column})`);
    this.name = 'WhenSyntaxError';
  }
}

const MAX_LENGTH = 2000;
const MAX_DEPTH = 32;

type Token = { readonly text: string; readonly column: number };

function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  const pattern = /\s*(?:([()])|([A-Za-z_][A-Za-z0-9_]*)|(\S))/y;
  for (;;) {
    const start = pattern.lastIndex;
    const m = pattern.exec(source);
    if (m === null) break;
    if (m[3] !== undefined) throw new WhenSyntaxError(`unexpected character '${m[3]}'`, start + m[0].length);
    tokens.push({ text: (m[1] ?? m[2])!, column: start + m[0].length - (m[1] ?? m[2])!.length + 1 });
  }
  return tokens;
}

const KEYWORDS = new Set(['and', 'or', 'not']);

/** Parses `source`; throws WhenSyntaxError naming the column of the first problem. */
export function parseWhen(source: string): WhenExpr {
  if (source.length > MAX_LENGTH) throw new WhenSyntaxError(`longer than ${MAX_LENGTH} characters`, MAX_LENGTH);
  const tokens = tokenize(source);
  let pos = 0;
  const peek = () => tokens[pos]?.text.toLowerCase();
  const column = () => tokens[pos]?.column ?? source.length + 1;

  const orExpr = (depth: number): WhenExpr => {
    let left = andExpr(depth);
    while (peek() === 'or') {
      pos++;
      left = { kind: 'or', left, right: andExpr(depth) };
    }
    return left;
  };
  const andExpr = (depth: number): WhenExpr => {
    let left = unary(depth);
    while (peek() === 'and') {
      pos++;
      left = { kind: 'and', left, right: unary(depth) };
    }
    return left;
  };
  const unary = (depth: number): WhenExpr => {
    if (depth > MAX_DEPTH) throw new WhenSyntaxError(`nested deeper than ${MAX_DEPTH}`, column());
    const token = tokens[pos];
    if (token === undefined) throw new WhenSyntaxError('expression ends early', column());
    const word = token.text.toLowerCase();
    if (word === 'not') {
      pos++;
      return { kind: 'not', operand: unary(depth + 1) };
    }
    if (token.text === '(') {
      pos++;
      const inner = orExpr(depth + 1);
      if (tokens[pos]?.text !== ')') throw new WhenSyntaxError("missing ')'", column());
      pos++;
      return inner;
    }
    if (token.text === ')' || KEYWORDS.has(word)) throw new WhenSyntaxError(`unexpected '${token.text}'`, token.column);
    pos++;
    return { kind: 'name', name: token.text };
  };

  const expr = orExpr(0);
  if (pos < tokens.length) throw new WhenSyntaxError(`unexpected '${tokens[pos]!.text}'`, column());
  return expr;
}

/** Every question name the expression refers to. */
export function namesIn(expr: WhenExpr, into = new Set<string>()): Set<string> {
  switch (expr.kind) {
    case 'name':
      into.add(expr.name);
      break;
    case 'not':
      namesIn(expr.operand, into);
      break;
    default:
      namesIn(expr.left, into);
      namesIn(expr.right, into);
  }
  return into;
}

function truthOf(answer: Answer | undefined): Truth {
  return answer === 'yes' ? true : answer === 'no' ? false : 'unknown';
}

/** Kleene logic: false and x = false, true or x = true, not unknown = unknown. A missing answer is unknown. */
export function evaluateWhen(expr: WhenExpr, answers: Readonly<Record<string, Answer>>): Truth {
  switch (expr.kind) {
    case 'name':
      return truthOf(answers[expr.name]);
    case 'not': {
      const v = evaluateWhen(expr.operand, answers);
      return v === 'unknown' ? 'unknown' : !v;
    }
    case 'and': {
      const l = evaluateWhen(expr.left, answers);
      const r = evaluateWhen(expr.right, answers);
      if (l === false || r === false) return false;
      return l === true && r === true ? true : 'unknown';
    }
    case 'or': {
      const l = evaluateWhen(expr.left, answers);
      const r = evaluateWhen(expr.right, answers);
      if (l === true || r === true) return true;
      return l === false && r === false ? false : 'unknown';
    }
  }
}
