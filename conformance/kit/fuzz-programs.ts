// Random WebAssembly programs for fuzzing the instrumenter (ABI-FUEL-*, ABI-MEMORY-002,
// ABI-ALLOC-001..004): a small grammar of straight-line code, bounded loops, branches (if,
// br_if, br_table, early return), calls to later functions, memory and table growth, bulk
// memory, loads and stores, written as WAT. The same program is wrapped two ways: a standalone
// module exporting `main` (for the instrumenter's own properties) and a helix/v1 guest whose
// execute answers {"value": main(a, b)} (for runs through the real host).
import { EMIT, KERNEL } from './extism-wat.js';
import { numberResultModule, watString } from './guest-wat.js';
import type { Rand } from './fuzz-random.js';

/** Functions in a program; $f0 is the entry, calls only go to later functions, so every program ends. */
const FUNCS = 3;
/** Loads, stores and bulk operations stay in [REGION, REGION + 0x4100): clear of the guest's data and allocator. */
const REGION = 0x8000;
const BINOPS = ['add', 'sub', 'mul', 'xor', 'and', 'or', 'shl', 'shr_u', 'shr_s', 'rotl', 'lt_u', 'gt_s', 'eq', 'ne'];

/** A table a program defines: its initial size and declared maximum (null: none). */
export interface TableDecl {
  readonly initial: number;
  readonly max: number | null;
}

/** A generated program. */
export interface Program {
  /** `$f0` .. `$f{FUNCS-1}`, each `(param i32 i32) (result i32)`. */
  readonly funcs: readonly string[];
  readonly pages: number;
  readonly maxPages: number | null;
  readonly tables: readonly TableDecl[];
  /** The arguments `main` is called with. */
  readonly args: readonly [number, number];
}

/** What to generate. */
export interface ProgramShape {
  /** Initial memory pages, at least 1 (the region lives in page 0): default 1..3. */
  readonly pages?: readonly [number, number];
  /** Chance that memory declares a maximum. */
  readonly maxChance?: number;
  /** Tables: how many (default 0..2) and their initial sizes (default 0..8). */
  readonly tables?: readonly [number, number];
  readonly tableInitial?: readonly [number, number];
}

/** A random program. */
export function randomProgram(r: Rand, shape: ProgramShape = {}): Program {
  const [pMin, pMax] = shape.pages ?? [1, 3];
  const pages = r.int(pMin, pMax);
  const maxPages = r.chance(shape.maxChance ?? 0.5) ? pages + r.int(0, 4) : null;
  const [tMin, tMax] = shape.tables ?? [0, 2];
  const [iMin, iMax] = shape.tableInitial ?? [0, 8];
  const tables = Array.from({ length: r.int(tMin, tMax) }, () => {
    const initial = r.int(iMin, iMax);
    return { initial, max: r.chance(0.5) ? initial + r.int(0, 12) : null };
  });
  const g = new Grammar(r, tables.length);
  const funcs = Array.from({ length: FUNCS }, (_, fn) => g.func(fn));
  return { funcs, pages, maxPages, tables, args: [r.int(-2000, 2000), r.int(-2000, 2000)] };
}

/** Limits to write into the module instead of the declared ones (the instrumenter's rewrite, for a reference module). */
export interface DeclaredLimits {
  readonly maxPages?: number | null;
  readonly tableMax?: readonly (number | null)[];
}

const tableFields = (p: Program, limits: DeclaredLimits, exported: boolean): string =>
  p.tables
    .map((t, i) => {
      const max = limits.tableMax === undefined ? t.max : limits.tableMax[i];
      return `(table $t${i} ${exported ? `(export "t${i}") ` : ''}${t.initial}${max === null || max === undefined ? '' : ` ${max}`} funcref)`;
    })
    .join(' ');

/** The program as a module exporting `memory`, `main` ($f0) and its tables `t0`.. */
export function standaloneModule(p: Program, limits: DeclaredLimits = {}): string {
  const max = limits.maxPages === undefined ? p.maxPages : limits.maxPages;
  return `(module
  (memory (export "memory") ${p.pages}${max === null ? '' : ` ${max}`})
  (global $g (mut i32) (i32.const 3))
  ${tableFields(p, limits, true)}
  ${p.funcs.join('\n  ')}
  (export "main" (func $f0)))`;
}

/** The program as a helix/v1 guest: execute answers {"value": main(args) as an unsigned 32-bit number}. */
export function guestModule(p: Program, limits: DeclaredLimits = {}): string {
  const max = limits.maxPages === undefined ? p.maxPages : limits.maxPages;
  return numberResultModule(`(i64.extend_i32_u (call $f0 (i32.const ${p.args[0]}) (i32.const ${p.args[1]})))`, {
    pages: p.pages,
    ...(max === null ? {} : { maxPages: max }),
    extra: `(global $g (mut i32) (i32.const 3)) ${tableFields(p, limits, false)} ${p.funcs.join('\n  ')}`,
  });
}

/**
 * The program as an extism/v1 plugin (entry `run`): its output is {"value": main(args) as an
 * unsigned 32-bit number}, written at 0x100 and copied into an Extism block.
 */
export function extismGuestModule(p: Program, limits: DeclaredLimits = {}): string {
  const max = limits.maxPages === undefined ? p.maxPages : limits.maxPages;
  const prefix = '{"value":';
  return `(module ${KERNEL}
  (memory (export "memory") ${p.pages}${max === null ? '' : ` ${max}`})
  (global $g (mut i32) (i32.const 3))
  (data (i32.const 256) "${watString(prefix)}")
  ${tableFields(p, limits, false)}
  ${p.funcs.join('\n  ')}
  ${EMIT}
  (func (export "run") (result i32)
    (local $v i32) (local $len i32) (local $t i32) (local $i i32)
    (local.set $v (call $f0 (i32.const ${p.args[0]}) (i32.const ${p.args[1]})))
    ;; the digits of $v (unsigned) after the prefix, then the closing brace
    (local.set $t (local.get $v))
    (loop $count
      (local.set $len (i32.add (local.get $len) (i32.const 1)))
      (local.set $t (i32.div_u (local.get $t) (i32.const 10)))
      (br_if $count (local.get $t)))
    (local.set $i (local.get $len))
    (loop $digits
      (local.set $i (i32.sub (local.get $i) (i32.const 1)))
      (i32.store8 (i32.add (i32.const ${256 + prefix.length}) (local.get $i)) (i32.add (i32.const 48) (i32.rem_u (local.get $v) (i32.const 10))))
      (local.set $v (i32.div_u (local.get $v) (i32.const 10)))
      (br_if $digits (local.get $i)))
    (i32.store8 (i32.add (i32.const ${256 + prefix.length}) (local.get $len)) (i32.const 125))
    (local.set $len (i32.add (local.get $len) (i32.const ${prefix.length + 1})))
    (call $output_set (call $emit (i32.const 256) (local.get $len)) (i64.extend_i32_u (local.get $len)))
    (i32.const 0)))`;
}

/** The grammar, for one program (its tables). */
class Grammar {
  constructor(
    private readonly r: Rand,
    private readonly tables: number,
  ) {}

  func(fn: number): string {
    const body = Array.from({ length: this.r.int(1, 4) }, () => this.stmt(fn, 2, 0)).join('\n    ');
    return `(func $f${fn} (param i32 i32) (result i32) (local i32 i32 i32 i32)\n    ${body}\n    ${this.expr(fn, 2)})`;
  }

  private addr(a: string, mask = 0x3ff8): string {
    return `(i32.add (i32.const ${REGION}) (i32.and ${a} (i32.const ${mask})))`;
  }

  private leaf(): string {
    const r = this.r;
    const leaves: (() => string)[] = [
      () => `(i32.const ${r.chance(0.2) ? r.pick([0, 1, -1, 777, 0x7fffffff, -0x80000000]) : r.int(-1000, 1000)})`,
      () => `(local.get ${r.int(0, 3)})`,
      () => '(global.get $g)',
      () => '(memory.size)',
    ];
    if (this.tables > 0) leaves.push(() => `(table.size $t${r.int(0, this.tables - 1)})`);
    return r.pick(leaves)();
  }

  /** An i32 expression. */
  expr(fn: number, depth: number): string {
    const r = this.r;
    if (depth <= 0 || r.chance(0.3)) return this.leaf();
    const sub = (): string => this.expr(fn, depth - 1);
    const options: (() => string)[] = [
      () => `(i32.${r.pick(BINOPS)} ${sub()} ${sub()})`,
      () => `(i32.div_u ${sub()} (i32.or ${sub()} (i32.const 1)))`,
      () => `(i32.rem_s ${sub()} (i32.or ${sub()} (i32.const 2)))`,
      () => `(i32.load ${this.addr(sub())})`,
      () => `(i32.load8_u ${this.addr(sub(), 0x3fff)})`,
      () => `(select ${sub()} ${sub()} ${sub()})`,
      () => `(if (result i32) ${sub()} (then ${sub()}) (else ${sub()}))`,
      () => `(i32.eqz ${sub()})`,
      () => `(memory.grow (i32.and ${sub()} (i32.const 3)))`,
    ];
    if (this.tables > 0) options.push(() => `(table.grow $t${r.int(0, this.tables - 1)} (ref.null func) (i32.and ${sub()} (i32.const 7)))`);
    if (fn < FUNCS - 1) options.push(() => `(call $f${r.int(fn + 1, FUNCS - 1)} ${sub()} ${sub()})`);
    return r.pick(options)();
  }

  /** A statement at loop nesting `loops` (which picks the counter local) and block depth `depth`. */
  stmt(fn: number, depth: number, loops: number): string {
    const r = this.r;
    const e = (): string => this.expr(fn, 2);
    const simple: (() => string)[] = [
      () => `(local.set ${r.int(2, 3)} ${e()})`,
      () => `(i32.store ${this.addr(e())} ${e()})`,
      () => `(i32.store8 ${this.addr(e(), 0x3fff)} ${e()})`,
      () => `(global.set $g ${e()})`,
      () => `(if (i32.eqz (i32.and ${e()} (i32.const 7))) (then (return ${e()})))`,
      () => `(drop (block (result i32) (drop (br_if 0 (i32.const 99) (i32.eq ${e()} (i32.const 3)))) (i32.const 5)))`,
      () => `(if (i32.eq ${e()} (i32.const 777)) (then unreachable))`,
      () => `(memory.fill ${this.addr(e(), 0x3f00)} ${e()} (i32.and ${e()} (i32.const 0xff)))`,
      () => `(memory.copy ${this.addr(e(), 0x3f00)} ${this.addr(e(), 0x3f00)} (i32.and ${e()} (i32.const 0xff)))`,
      () => `(drop ${e()})`,
    ];
    if (depth <= 0) return r.pick(simple)();
    const body = (l = loops): string => Array.from({ length: r.int(0, 3) }, () => this.stmt(fn, depth - 1, l)).join(' ');
    const nested: (() => string)[] = [
      () => r.pick(simple)(),
      () => `(if ${e()} (then ${body()}) (else ${body()}))`,
      () => `(block $b${depth} ${body()} (br_if $b${depth} ${e()}) ${body()})`,
      () =>
        `(block $x${depth} (block $y${depth} ${body()} (br_table $x${depth} $y${depth} $x${depth} (i32.and ${e()} (i32.const 3)))) ${body()})`,
    ];
    if (loops < 2) {
      const counter = 4 + loops;
      nested.push(
        () =>
          `(local.set ${counter} (i32.const ${r.int(1, 5)})) (loop $l${depth} ${body(loops + 1)} ` +
          `(local.set ${counter} (i32.sub (local.get ${counter}) (i32.const 1))) (br_if $l${depth} (local.get ${counter})))`,
      );
    }
    return r.pick(nested)();
  }
}
