/**
 * Kernel interfaces, declared once as data: a kernel's uniform parameter struct (named fields of one
 * 4-byte word each, in order) and its bindings by name (binding number, address space and access,
 * WGSL element type). From one declaration come both sides of a kernel that used to be kept in step
 * by hand:
 *
 *  - `wgsl(use, types)`: the WGSL declarations of the bindings a variant uses (the struct, then
 *    `@group(0) @binding(k) var...` lines in binding order);
 *  - `pack({ n, tiles, ... })`: the uniform's words, by field name (u32 / i32 / f32 bit patterns,
 *    padded to 16 bytes); unknown or missing names throw;
 *  - `entries({ keys_in: resource, ... }, use)`: bind-group entries in binding order; a name the
 *    variant does not declare, or one it declares and is not given, throws naming it.
 *
 * A binding may be `optional`: declared and bound only by the variants that `use` it, so one
 * interface serves a kernel's variants while binding numbers stay put; optional bindings may share
 * a number when no variant uses two of them (one slot read as vec4s or scalars, or holding atomic
 * states or plain sums, under the names the kernel reads it by). A binding without a `type`
 * takes its element type per variant (`types`: the kernel's key type, its accumulator struct, ...);
 * `form` wraps the element type (vec4 loads, atomics). Everything is computed when the interface is
 * declared: `pack` and `entries` only look names up and write words.
 */

/** A parameter field: one 4-byte word of the uniform struct. */
export type ParamType = 'u32' | 'i32' | 'f32';

/** How a binding is accessed: a uniform, or a storage array read-only or read-write. */
export type BindingAccess = 'uniform' | 'read' | 'read_write';

export interface BindingSpec {
  readonly binding: number;
  readonly access: BindingAccess;
  /**
   * WGSL type of an array element (`u32`, `atomic<u32>`, `vec4<f32>`; for a uniform, the variable's
   * type). Omitted: each variant gives it in `types`.
   */
  readonly type?: string;
  /** Wraps the element type: `vec4<T>` or `atomic<T>`. */
  readonly form?: 'vec4' | 'atomic';
  /**
   * Declared and bound only by variants that use it (`use[name]`); optional bindings may share a
   * number (a variant uses one of them at most). @default false
   */
  readonly optional?: boolean;
}

export interface ParamsSpec {
  /** WGSL name of the struct. */
  readonly struct: string;
  /** WGSL name of the uniform variable; also its key in `entries`. */
  readonly name: string;
  readonly binding: number;
  /** The fields in struct order (no padding: the interface pads to 16 bytes). */
  readonly fields: Readonly<Record<string, ParamType>>;
}

export interface InterfaceSpec {
  /** What error messages call the kernel. */
  readonly name: string;
  readonly params?: ParamsSpec;
  readonly bindings: Readonly<Record<string, BindingSpec>>;
}

type Names<T> = keyof T & string;
/** The parameter field names of an interface. */
export type ParamName<S extends InterfaceSpec> = S['params'] extends ParamsSpec ? Names<S['params']['fields']> : never;
/** The binding names of an interface (the params variable's name included). */
export type BindingName<S extends InterfaceSpec> =
  | Names<S['bindings']>
  | (S['params'] extends ParamsSpec ? S['params']['name'] : never);
/** The optional binding names of an interface. */
export type OptionalName<S extends InterfaceSpec> = {
  [K in Names<S['bindings']>]: S['bindings'][K] extends { readonly optional: true } ? K : never;
}[Names<S['bindings']>];
/** Which optional bindings a variant uses. */
export type InterfaceUse<S extends InterfaceSpec> = Readonly<Partial<Record<OptionalName<S>, boolean>>>;
/** Element types given per variant (bindings declared without a `type`). */
export type InterfaceTypes<S extends InterfaceSpec> = Readonly<Partial<Record<Names<S['bindings']>, string>>>;
/** Resources by binding name; `undefined` counts as not given. */
export type InterfaceResources<S extends InterfaceSpec> = Readonly<
  Partial<Record<BindingName<S>, GPUBindingResource | undefined>>
>;
/** Parameter values by field name. */
export type InterfaceParams<S extends InterfaceSpec> = Readonly<Record<ParamName<S>, number>>;

interface Slot {
  readonly name: string;
  readonly binding: number;
  readonly access: BindingAccess;
  readonly type: string | undefined;
  readonly form: 'vec4' | 'atomic' | undefined;
  readonly optional: boolean;
  /** The params uniform (its type is the struct). */
  readonly params: boolean;
}

interface Field {
  readonly word: number;
  readonly type: ParamType;
}

const IDENT = /^[A-Za-z][A-Za-z0-9_]*$/;
const PARAM_TYPES: readonly string[] = ['u32', 'i32', 'f32'];
const NO_USE = Object.freeze({});

// f32 bit patterns through one shared word.
const F32 = new Float32Array(1);
const F32_BITS = new Uint32Array(F32.buffer);

/** A kernel interface (see the module's comment); build one with `kernelInterface(spec)`. */
export class KernelInterface<S extends InterfaceSpec> {
  readonly name: string;
  /** u32 words of the packed parameters (a multiple of 4; 0 without params). */
  readonly paramWords: number;
  /** WGSL of the params struct ('' without params). */
  readonly structText: string;
  private readonly slots: readonly Slot[];
  private readonly byName = new Map<string, Slot>();
  private readonly fields = new Map<string, Field>();
  private readonly fieldNames: readonly string[];

  constructor(readonly spec: S) {
    const where = `kernel interface '${spec.name}'`;
    const slots: Slot[] = [];
    const p = spec.params;
    if (p) {
      for (const id of [p.struct, p.name]) {
        if (!IDENT.test(id)) throw new Error(`${where}: '${id}' is not a WGSL identifier`);
      }
      slots.push({
        name: p.name,
        binding: p.binding,
        access: 'uniform',
        type: p.struct,
        form: undefined,
        optional: false,
        params: true,
      });
      const names = Object.keys(p.fields);
      names.forEach((f, word) => {
        const type = p.fields[f] as ParamType;
        if (!IDENT.test(f)) throw new Error(`${where}: parameter '${f}' is not a WGSL identifier (or starts with _)`);
        if (!PARAM_TYPES.includes(type)) throw new Error(`${where}: parameter '${f}' of type '${type}'`);
        this.fields.set(f, { word, type });
      });
      this.fieldNames = names;
      this.paramWords = Math.max(4, Math.ceil(names.length / 4) * 4);
      const members = names.map((f) => `${f}: ${p.fields[f]}`);
      for (let k = names.length; k < this.paramWords; k++) members.push(`_pad${k - names.length}: u32`);
      this.structText = `struct ${p.struct} { ${members.join(', ')} }`;
    } else {
      this.fieldNames = [];
      this.paramWords = 0;
      this.structText = '';
    }
    for (const [name, b] of Object.entries(spec.bindings)) {
      if (!IDENT.test(name)) throw new Error(`${where}: binding '${name}' is not a WGSL identifier`);
      if (b.access === 'uniform' && b.form) throw new Error(`${where}: uniform '${name}' with a form`);
      slots.push({
        name,
        binding: b.binding,
        access: b.access,
        type: b.type,
        form: b.form,
        optional: b.optional ?? false,
        params: false,
      });
    }
    slots.sort((a, b) => a.binding - b.binding);
    slots.forEach((s, i) => {
      if (!Number.isInteger(s.binding) || s.binding < 0) {
        throw new Error(`${where}: '${s.name}' at binding ${s.binding}`);
      }
      const prev = slots[i - 1];
      if (prev && prev.binding === s.binding && !(prev.optional && s.optional)) {
        throw new Error(`${where}: '${prev.name}' and '${s.name}' both at binding ${s.binding}`);
      }
      if (this.byName.has(s.name)) throw new Error(`${where}: two bindings named '${s.name}'`);
      this.byName.set(s.name, s);
    });
    this.slots = slots;
    this.name = spec.name;
  }

  /**
   * The names the variant using the optional bindings set in `use` declares, in binding order (the
   * params variable first when it has binding 0): what a kernel touches so the pipeline's layout
   * keeps every binding.
   */
  names(use: InterfaceUse<S> = NO_USE): string[] {
    this.checkNames(use, 'use', true);
    const out: string[] = [];
    let last: Slot | undefined;
    for (const s of this.slots) {
      if (!this.used(s, use)) continue;
      if (last && last.binding === s.binding) this.twoAt(last, s);
      out.push(s.name);
      last = s;
    }
    return out;
  }

  /** The binding number of `name`. */
  binding(name: BindingName<S>): number {
    return this.slot(name).binding;
  }

  /**
   * The WGSL declarations of the variant using the optional bindings set in `use`: the params
   * struct, then one `@group(0) @binding(k) var...` line per binding in binding order. `types`
   * gives the element type of each used binding declared without one.
   */
  wgsl(use: InterfaceUse<S> = NO_USE, types: InterfaceTypes<S> = NO_USE): string {
    this.checkNames(use, 'use', true);
    this.checkNames(types, 'types', false);
    const lines: string[] = this.structText ? [this.structText] : [];
    let last: Slot | undefined;
    for (const s of this.slots) {
      if (!this.used(s, use)) continue;
      if (last && last.binding === s.binding) this.twoAt(last, s);
      last = s;
      const given = (types as Record<string, string | undefined>)[s.name];
      if (given !== undefined && s.type !== undefined) {
        throw new Error(`kernel interface '${this.name}': '${s.name}' has type ${s.type}; types gives ${given}`);
      }
      const elem = s.type ?? given;
      if (elem === undefined) throw new Error(`kernel interface '${this.name}': no type for '${s.name}' (types)`);
      const t = s.form ? `${s.form}<${elem}>` : elem;
      const decl =
        s.access === 'uniform' ? `var<uniform> ${s.name}: ${t}` : `var<storage, ${s.access}> ${s.name}: array<${t}>`;
      lines.push(`@group(0) @binding(${s.binding}) ${decl};`);
    }
    return lines.join('\n');
  }

  /**
   * The parameter words (u32, i32 and f32 bit patterns; padded to 16 bytes) from every field by
   * name. An unknown or missing field, or an integer field out of range, throws.
   */
  pack(values: InterfaceParams<S>): Uint32Array {
    const out = new Uint32Array(this.paramWords);
    const v = values as Readonly<Record<string, number>>;
    let seen = 0;
    for (const name in v) {
      const f = this.fields.get(name);
      if (f === undefined) {
        throw new Error(`kernel interface '${this.name}': no parameter '${name}' (${this.fieldNames.join(', ')})`);
      }
      const x = v[name] as number;
      if (f.type === 'f32') {
        if (typeof x !== 'number') this.badParam(name, x);
        F32[0] = x;
        out[f.word] = F32_BITS[0] as number;
      } else {
        const lo = f.type === 'u32' ? 0 : -0x80000000;
        if (!Number.isInteger(x) || x < lo || x >= lo + 0x100000000) this.badParam(name, x);
        out[f.word] = x;
      }
      seen++;
    }
    if (seen !== this.fieldNames.length) {
      const missing = this.fieldNames.filter((f) => !(f in v));
      throw new Error(`kernel interface '${this.name}': parameter(s) ${missing.join(', ')} not given`);
    }
    return out;
  }

  /**
   * Bind-group entries in binding order from resources by name (the params uniform under its
   * variable's name) for the variant using the optional bindings set in `use`. A name the variant
   * does not declare, or a declared one not given, throws naming it.
   */
  entries(resources: InterfaceResources<S>, use: InterfaceUse<S> = NO_USE): GPUBindGroupEntry[] {
    const r = resources as Readonly<Record<string, GPUBindingResource | undefined>>;
    const out: GPUBindGroupEntry[] = [];
    let last: Slot | undefined;
    for (const s of this.slots) {
      const resource = r[s.name];
      if (this.used(s, use)) {
        if (resource === undefined) {
          throw new Error(`kernel interface '${this.name}': no resource for binding '${s.name}' (${s.binding})`);
        }
        if (last && last.binding === s.binding) this.twoAt(last, s);
        last = s;
        out.push({ binding: s.binding, resource });
      } else if (resource !== undefined) {
        throw new Error(`kernel interface '${this.name}': '${s.name}' is not bound by this variant`);
      }
    }
    let given = 0;
    for (const name in r) if (r[name] !== undefined) given++;
    if (given !== out.length) {
      for (const name in r) {
        if (r[name] !== undefined && !this.byName.has(name)) {
          throw new Error(`kernel interface '${this.name}': no binding named '${name}'`);
        }
      }
    }
    return out;
  }

  private used(s: Slot, use: InterfaceUse<S>): boolean {
    return !s.optional || (use as Readonly<Record<string, boolean | undefined>>)[s.name] === true;
  }

  private slot(name: string): Slot {
    const s = this.byName.get(name);
    if (!s) throw new Error(`kernel interface '${this.name}': no binding named '${name}'`);
    return s;
  }

  private checkNames(o: object, what: string, optionalOnly: boolean): void {
    for (const name in o) {
      const s = this.slot(name);
      if (optionalOnly && !s.optional)
        throw new Error(`kernel interface '${this.name}': ${what}.${name}: not optional`);
    }
  }

  private twoAt(a: Slot, b: Slot): never {
    throw new Error(`kernel interface '${this.name}': '${a.name}' and '${b.name}' both used at binding ${a.binding}`);
  }

  private badParam(name: string, x: unknown): never {
    const f = this.fields.get(name) as Field;
    throw new Error(`kernel interface '${this.name}': parameter '${name}' (${f.type}) = ${String(x)}`);
  }
}

/** Declares a kernel interface (see the module's comment). Names are checked here, once. */
export function kernelInterface<const S extends InterfaceSpec>(spec: S): KernelInterface<S> {
  return new KernelInterface(spec);
}
