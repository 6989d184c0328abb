/**
 * innerProduct(policy, a, b, init?, reduceOp = plus, productOp = multiplies): oneDPL's
 * inner_product, `init reduceOp (a[0] productOp b[0]) reduceOp ...`.
 *
 * Strategy: the binary transform-reduce (see ../transform-reduce): CPU engine loops (par on the
 * worker pool), or the GPU transform-reduce engine loading both inputs (vec4 loads where aligned).
 * Size tiers: n = 0 returns init at once; otherwise see the engine.
 */

import { multiplies, plus } from '@webdpl/core';
import type { Policy } from '@webdpl/policies';
import { type ArrayArg, checkArray, checkFunction, checkNumber, checkSameLength } from '../common/args';
import { dispatch } from '../pattern/dispatch';
import { type FunctionArg, transformReducePattern } from '../transform-reduce/index';

/**
 * The inner product of `a` and `b` (equal lengths).
 * @param init the starting value, converted to the product's type.
 *   @default the identity of `reduceOp` for the product's type (0 for plus)
 * @param reduceOp combines the products; GPU runs need an identity. @default plus
 * @param productOp makes one value of a[i] and b[i]. @default multiplies (u32/i32 wrap, f32 rounding)
 */
export function innerProduct(
  policy: Policy,
  a: ArrayArg,
  b: ArrayArg,
  init?: number,
  reduceOp?: FunctionArg,
  productOp?: FunctionArg,
): Promise<number> {
  return dispatch(policy, () => {
    const x = checkArray(a, 'a');
    const y = checkArray(b, 'b');
    checkSameLength(x, y, 'a', 'b');
    const start = init === undefined ? undefined : checkNumber(init, 'init');
    const r = reduceOp === undefined ? plus : checkFunction(reduceOp, 'reduceOp', 2);
    const p = productOp === undefined ? multiplies : checkFunction(productOp, 'productOp', 2);
    return transformReducePattern('innerProduct', [x, y], start, r, p, 'productOp', ['a', 'b']);
  });
}
