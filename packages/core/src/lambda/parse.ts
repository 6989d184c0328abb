/**
 * Lambda front end: reads a function's source, parses it with acorn and turns the body into a small
 * expression tree, rejecting (with the construct and its position) everything the GPU cannot run:
 * free variables, statements, calls other than the listed Math functions, closures, `this`, `new`,
 * member access other than Math.*, strings. Captures and Math constants become number or boolean
 * nodes here, so later stages see only parameters and constants.
 */
import type * as acorn from 'acorn';
import { parse as acornParse } from 'acorn';
import { LambdaError } from '../errors';

export type UnaryOp = '-' | '+' | '!' | '~';
export type BinaryOp =
  | '+'
  | '-'
  | '*'
  | '/'
  | '%'
  | '**'
  | '&'
  | '|'
  | '^'
  | '<<'
  | '>>'
  | '>>>'
  | '=='
  | '!='
  | '==='
  | '!=='
  | '<'
  | '<='
  | '>'
  | '>=';
export type LogicalOp = '&&' | '||';

/** Math functions a lambda may call. */
export const MATH_FUNCTIONS = [
  'min',
  'max',
  'abs',
  'sqrt',
  'floor',
  'ceil',
  'round',
  'trunc',
  'exp',
  'log',
  'pow',
  'sin',
  'cos',
  'tan',
  'fround',
  'sign',
] as const;
export type MathFunction = (typeof MATH_FUNCTIONS)[number];

const MATH_CONSTANTS: Readonly<Record<string, number>> = { PI: Math.PI, E: Math.E };

/** Parsed lambda body. `pos` is a character offset into the function's source. */
export type Expr =
  | { readonly kind: 'number'; readonly value: number; readonly pos: number }
  | { readonly kind: 'boolean'; readonly value: boolean; readonly pos: number }
  | {
      readonly kind: 'param';
      readonly index: number;
      readonly name: string;
      readonly pos: number;
      /** Tuple lambdas: `p[component]`, a component of a tuple parameter. */
      readonly component?: number;
    }
  | { readonly kind: 'unary'; readonly op: UnaryOp; readonly arg: Expr; readonly pos: number }
  | { readonly kind: 'binary'; readonly op: BinaryOp; readonly left: Expr; readonly right: Expr; readonly pos: number }
  | {
      readonly kind: 'logical';
      readonly op: LogicalOp;
      readonly left: Expr;
      readonly right: Expr;
      readonly pos: number;
    }
  | {
      readonly kind: 'conditional';
      readonly test: Expr;
      readonly yes: Expr;
      readonly no: Expr;
      readonly pos: number;
    }
  | { readonly kind: 'call'; readonly fn: MathFunction; readonly args: readonly Expr[]; readonly pos: number };

export interface ParsedLambda {
  /** The function's source, as Function.prototype.toString gives it. */
  readonly source: string;
  /** Parameter names, in order (1 or 2; up to TUPLE_MAX_PARAMS for tuple lambdas). */
  readonly params: readonly string[];
  readonly body: Expr;
  /** Tuple lambdas whose body is an array literal `[e0, e1, ...]`: its elements (`body` is the first). */
  readonly items?: readonly Expr[];
}

/** Most parameters of a tuple lambda (zip arguments: 4 arrays and an index). */
export const TUPLE_MAX_PARAMS = 5;

/** A LambdaError for `source` at `pos`, with a caret under the offending spot. */
export function lambdaError(source: string, pos: number, message: string): LambdaError {
  return new LambdaError(`lambda: ${message} (at position ${pos})\n${snippet(source, pos)}`, source, pos);
}

function snippet(source: string, pos: number): string {
  const lineStart = source.lastIndexOf('\n', pos - 1) + 1;
  let lineEnd = source.indexOf('\n', pos);
  if (lineEnd < 0) lineEnd = source.length;
  const from = Math.max(lineStart, pos - 50);
  const to = Math.min(lineEnd, pos + 50);
  const text = source.slice(from, to);
  return `    ${from > lineStart ? '...' : ''}${text}${to < lineEnd ? '...' : ''}\n    ${' '.repeat(pos - from + (from > lineStart ? 3 : 0))}^`;
}

/**
 * The source of `fn`, or a LambdaError when it cannot be read (native and bound functions print
 * `[native code]`).
 */
export function functionSource(fn: unknown): string {
  if (typeof fn !== 'function') {
    throw new LambdaError(`lambda: expected a function, got ${fn === null ? 'null' : typeof fn}`);
  }
  const source = Function.prototype.toString.call(fn);
  if (/\{\s*\[native code\]\s*\}\s*$/.test(source)) {
    throw new LambdaError(
      `lambda: the source of '${fn.name || 'anonymous'}' cannot be read (a native or bound function): pass a plain arrow function such as (x) => x * 2`,
      source,
    );
  }
  return source;
}

const PARSE_OPTIONS: acorn.Options = { ecmaVersion: 'latest', sourceType: 'script' };

/** Parses `source` as one function expression; returns the node and how far the wrapping shifted positions. */
function parseFunction(source: string): { fn: acorn.Node; offset: number } {
  let first: unknown;
  try {
    const program = acornParse(`(${source}\n)`, PARSE_OPTIONS);
    const stmt = program.body[0];
    if (program.body.length === 1 && stmt?.type === 'ExpressionStatement') return { fn: stmt.expression, offset: 1 };
  } catch (e) {
    first = e;
  }
  // Method shorthand (`f(x) { return x; }`) prints without `function`: parse it as an object member.
  try {
    const program = acornParse(`({${source}\n})`, PARSE_OPTIONS);
    const stmt = program.body[0];
    if (stmt?.type === 'ExpressionStatement' && stmt.expression.type === 'ObjectExpression') {
      const prop = stmt.expression.properties[0];
      if (stmt.expression.properties.length === 1 && prop?.type === 'Property' && prop.method) {
        return { fn: prop.value, offset: 2 };
      }
    }
  } catch {
    // fall through to the first error
  }
  const pos =
    typeof (first as { pos?: unknown })?.pos === 'number' ? Math.max(0, (first as { pos: number }).pos - 1) : 0;
  throw lambdaError(
    source,
    pos,
    `cannot parse the function: ${(first as Error | undefined)?.message ?? 'not a function'}`,
  );
}

const NODE_NAMES: Readonly<Record<string, string>> = {
  ThisExpression: '`this`',
  NewExpression: '`new`',
  ArrayExpression: 'an array literal',
  ObjectExpression: 'an object literal',
  FunctionExpression: 'a nested function',
  ArrowFunctionExpression: 'a nested function (closure)',
  ClassExpression: 'a class',
  AssignmentExpression: 'an assignment',
  UpdateExpression: 'an increment/decrement',
  SequenceExpression: 'a comma expression',
  TemplateLiteral: 'a template string',
  TaggedTemplateExpression: 'a tagged template',
  YieldExpression: '`yield`',
  AwaitExpression: '`await`',
  ChainExpression: 'optional chaining',
  ImportExpression: '`import()`',
  MetaProperty: 'a meta property',
  SpreadElement: 'a spread argument',
  VariableDeclaration: 'a declaration (a statement)',
  FunctionDeclaration: 'a function declaration (a statement)',
  ClassDeclaration: 'a class declaration (a statement)',
  ExpressionStatement: 'an expression statement',
  IfStatement: 'an if statement',
  ForStatement: 'a for loop (a statement)',
  ForInStatement: 'a for-in loop (a statement)',
  ForOfStatement: 'a for-of loop (a statement)',
  WhileStatement: 'a while loop (a statement)',
  DoWhileStatement: 'a do-while loop (a statement)',
  SwitchStatement: 'a switch statement',
  TryStatement: 'a try statement',
  ThrowStatement: 'a throw statement',
  BlockStatement: 'a nested block (a statement)',
  EmptyStatement: 'an empty statement',
  LabeledStatement: 'a labeled statement',
  BreakStatement: 'a break statement',
  ContinueStatement: 'a continue statement',
  WithStatement: 'a with statement',
  DebuggerStatement: 'a debugger statement',
};

function describeNode(node: acorn.Node): string {
  return NODE_NAMES[node.type] ?? `a ${node.type}`;
}

const BODY_HINT = 'the body must be a single expression, or a block holding one `return expression;`';

/**
 * Parses `source` (from functionSource) into a ParsedLambda. `captures` are outside values the body
 * may name; they become constants. Throws LambdaError naming the first unsupported construct.
 */
export function parseLambda(
  source: string,
  captures: Readonly<Record<string, number | boolean>>,
  tuples = false,
): ParsedLambda {
  const { fn, offset } = parseFunction(source);
  const at = (node: acorn.Node) => node.start - offset;
  const fail = (node: acorn.Node, message: string): never => {
    throw lambdaError(source, at(node), message);
  };
  if (fn.type !== 'ArrowFunctionExpression' && fn.type !== 'FunctionExpression') {
    fail(fn, `${describeNode(fn)} is not a function: pass an arrow function such as (x) => x * 2`);
  }
  const f = fn as acorn.ArrowFunctionExpression | acorn.FunctionExpression;
  if (f.async) fail(f, 'an async function cannot run on the GPU');
  if (f.generator) fail(f, 'a generator function cannot run on the GPU');
  const params: string[] = [];
  for (const p of f.params) {
    if (p.type !== 'Identifier') {
      const what =
        p.type === 'AssignmentPattern'
          ? 'a default parameter value'
          : p.type === 'RestElement'
            ? 'a rest parameter'
            : 'a destructuring parameter';
      fail(p, `${what} is not supported: use plain parameters`);
    }
    params.push((p as acorn.Identifier).name);
  }
  if (tuples) {
    if (params.length < 1 || params.length > TUPLE_MAX_PARAMS) {
      fail(f, `a lambda takes 1 to ${TUPLE_MAX_PARAMS} parameters, this one takes ${params.length}`);
    }
  } else if (params.length < 1 || params.length > 2) {
    fail(f, `a lambda takes 1 or 2 parameters, this one takes ${params.length}`);
  }

  let bodyExpr: acorn.Expression;
  if (f.body.type === 'BlockStatement') {
    const stmts = f.body.body.filter(
      (s) => !(s.type === 'ExpressionStatement' && (s as acorn.ExpressionStatement).directive !== undefined),
    );
    const ret = stmts[0];
    if (!ret) fail(f.body, `an empty body: ${BODY_HINT}`);
    if (ret?.type !== 'ReturnStatement') fail(ret as acorn.Node, `${describeNode(ret as acorn.Node)}: ${BODY_HINT}`);
    const extra = stmts[1];
    if (extra) fail(extra, `${describeNode(extra)} after the return: ${BODY_HINT}`);
    const arg = (ret as acorn.ReturnStatement).argument;
    if (!arg) fail(ret as acorn.Node, `a return without a value: ${BODY_HINT}`);
    bodyExpr = arg as acorn.Expression;
  } else {
    bodyExpr = f.body;
  }

  const paramIndex = new Map(params.map((p, i) => [p, i]));
  const isLocal = (name: string) => paramIndex.has(name);

  const mathMember = (node: acorn.MemberExpression): string => {
    const obj = node.object;
    const isMath = obj.type === 'Identifier' && obj.name === 'Math' && !isLocal('Math');
    const prop = !node.computed && node.property.type === 'Identifier' ? node.property.name : undefined;
    if (!isMath) {
      const text = source.slice(at(node), node.end - offset);
      fail(
        node,
        `member access '${text}' is not supported: only Math.* may be used; pass outside values through options.captures`,
      );
    }
    if (node.optional) fail(node, 'optional chaining is not supported');
    if (prop === undefined) fail(node, 'computed member access on Math is not supported: write Math.name');
    return prop as string;
  };

  const visit = (node: acorn.Node): Expr => {
    const pos = at(node);
    switch (node.type) {
      case 'Literal': {
        const lit = node as acorn.Literal;
        if (typeof lit.value === 'number') return { kind: 'number', value: lit.value, pos };
        if (typeof lit.value === 'boolean') return { kind: 'boolean', value: lit.value, pos };
        if (typeof lit.value === 'string') return fail(node, `a string literal ${lit.raw} cannot run on the GPU`);
        if (lit.bigint !== undefined) return fail(node, `a BigInt literal ${lit.raw} is not supported`);
        if (lit.regex) return fail(node, `a regular expression ${lit.raw} is not supported`);
        return fail(node, `${lit.raw} is not supported`);
      }
      case 'Identifier': {
        const name = (node as acorn.Identifier).name;
        const index = paramIndex.get(name);
        if (index !== undefined) return { kind: 'param', index, name, pos };
        if (Object.hasOwn(captures, name)) {
          const v = captures[name] as number | boolean;
          return typeof v === 'boolean' ? { kind: 'boolean', value: v, pos } : { kind: 'number', value: v, pos };
        }
        if (name === 'NaN') return { kind: 'number', value: Number.NaN, pos };
        if (name === 'Infinity') return { kind: 'number', value: Number.POSITIVE_INFINITY, pos };
        if (name === 'Math') return fail(node, "'Math' on its own is not a value: use Math.name");
        if (name === 'undefined') return fail(node, '`undefined` is not a number');
        return fail(
          node,
          `free variable '${name}': pass outside values through options.captures, e.g. { captures: { ${name} } }`,
        );
      }
      case 'ParenthesizedExpression':
        return visit((node as acorn.ParenthesizedExpression).expression);
      case 'UnaryExpression': {
        const u = node as acorn.UnaryExpression;
        if (u.operator === '-' || u.operator === '+' || u.operator === '!' || u.operator === '~') {
          return { kind: 'unary', op: u.operator, arg: visit(u.argument), pos };
        }
        return fail(node, `the '${u.operator}' operator is not supported`);
      }
      case 'BinaryExpression': {
        const b = node as acorn.BinaryExpression;
        if (b.operator === 'in' || b.operator === 'instanceof') {
          return fail(node, `the '${b.operator}' operator is not supported`);
        }
        if (b.left.type === 'PrivateIdentifier') return fail(b.left, 'a private name is not supported');
        return { kind: 'binary', op: b.operator as BinaryOp, left: visit(b.left), right: visit(b.right), pos };
      }
      case 'LogicalExpression': {
        const l = node as acorn.LogicalExpression;
        if (l.operator === '??') return fail(node, "the '??' operator is not supported");
        return { kind: 'logical', op: l.operator, left: visit(l.left), right: visit(l.right), pos };
      }
      case 'ConditionalExpression': {
        const c = node as acorn.ConditionalExpression;
        return { kind: 'conditional', test: visit(c.test), yes: visit(c.consequent), no: visit(c.alternate), pos };
      }
      case 'MemberExpression': {
        const m = node as acorn.MemberExpression;
        // Tuple lambdas: `p[k]`, component k of a tuple parameter (checked against the shape later).
        if (tuples && m.computed && m.object.type === 'Identifier' && isLocal(m.object.name)) {
          const k = m.property;
          if (m.optional) return fail(node, 'optional chaining is not supported');
          if (k.type !== 'Literal' || typeof k.value !== 'number' || !Number.isInteger(k.value) || k.value < 0) {
            return fail(node, `a tuple parameter is indexed by a literal whole number, e.g. ${m.object.name}[0]`);
          }
          const name = m.object.name;
          return { kind: 'param', index: paramIndex.get(name) as number, name, pos, component: k.value };
        }
        const name = mathMember(m);
        const value = MATH_CONSTANTS[name];
        if (value === undefined) {
          return fail(
            node,
            (MATH_FUNCTIONS as readonly string[]).includes(name)
              ? `Math.${name} is a function: call it`
              : `Math.${name} is not supported (supported: Math.PI, Math.E)`,
          );
        }
        return { kind: 'number', value, pos };
      }
      case 'CallExpression': {
        const c = node as acorn.CallExpression;
        if (c.optional) return fail(node, 'an optional call is not supported');
        if (c.callee.type !== 'MemberExpression') {
          const callee = source.slice(at(c.callee), c.callee.end - offset);
          return fail(
            node,
            `a call of '${callee}' is not supported: only Math.${MATH_FUNCTIONS.join('/')} may be called`,
          );
        }
        const name = mathMember(c.callee);
        if (!(MATH_FUNCTIONS as readonly string[]).includes(name)) {
          return fail(node, `Math.${name} is not supported (supported: Math.${MATH_FUNCTIONS.join(', Math.')})`);
        }
        const fnName = name as MathFunction;
        const args = c.arguments.map((a) => {
          if (a.type === 'SpreadElement') return fail(a, 'a spread argument is not supported');
          return visit(a);
        });
        const want =
          fnName === 'min' || fnName === 'max'
            ? 'at least 1 argument'
            : fnName === 'pow'
              ? '2 arguments'
              : '1 argument';
        const ok = fnName === 'min' || fnName === 'max' ? args.length >= 1 : args.length === (fnName === 'pow' ? 2 : 1);
        if (!ok) return fail(node, `Math.${name} takes ${want} here, got ${args.length}`);
        return { kind: 'call', fn: fnName, args, pos };
      }
      default:
        return fail(node, `${describeNode(node)} is not supported in a lambda`);
    }
  };

  if (tuples && bodyExpr.type === 'ArrayExpression') {
    const items = bodyExpr.elements.map((el) => {
      if (el === null) return fail(bodyExpr, 'a hole in the result tuple is not supported');
      if (el.type === 'SpreadElement') return fail(el, 'a spread element in the result tuple is not supported');
      return visit(el);
    });
    if (items.length === 0) fail(bodyExpr, 'an empty result tuple: return [a, b, ...] with 1 to 4 elements');
    return { source, params, body: items[0] as Expr, items };
  }
  return { source, params, body: visit(bodyExpr) };
}

/**
 * Parameter names of a function's source (for the explicit `{ js, wgsl }` form), and whether it is a
 * method shorthand (`f(a) { ... }`, which needs `function ` in front to be an expression).
 */
export function parameterNames(source: string): { readonly names: readonly string[]; readonly method: boolean } {
  const { fn, offset } = parseFunction(source);
  if (fn.type !== 'ArrowFunctionExpression' && fn.type !== 'FunctionExpression') {
    throw lambdaError(source, fn.start - offset, `${describeNode(fn)} is not a function`);
  }
  const names = (fn as acorn.ArrowFunctionExpression | acorn.FunctionExpression).params.map((p) => {
    if (p.type !== 'Identifier') throw lambdaError(source, p.start - offset, 'parameters must be plain names');
    return p.name;
  });
  return { names, method: offset === 2 };
}
