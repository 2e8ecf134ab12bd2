import { createQueryId, type Compilable, type CompiledQuery, type Insertable, type InsertQueryBuilder, type InsertResult } from 'kysely';
import { isPostgres, type DbOrTrx } from './database.js';
import type { Database } from './schema.js';

/** A place in a compiled shape that each run fills with one of its values. */
class Slot {
  constructor(readonly index: number) {}
}

/** The compiled SQL of a shape on one engine, its parameters with Slots where the values go. */
interface Template {
  sql: string;
  parameters: readonly unknown[];
  query: CompiledQuery['query'];
}

/**
 * A statement built and compiled by Kysely once per engine, then run with new values
 * (docs/architecture.md, "Compiled shapes"). Building a query and compiling it costs more
 * CPU than SQLite takes to run most of the hot path's statements; a check-in's own
 * statements are the same shape every time, only their values change.
 *
 * `build` receives placeholders typed as the values and must use them only as values
 * (in `values()`, `set()`, a comparison's right side): never in a condition of the build
 * itself, never spread or inspected, since it runs once. Each placeholder must reach the
 * compiled statement; a shape that drops one throws at its first run. An undefined value
 * is bound as NULL (a shape names every column it writes: none is left to its default).
 */
export function compiledShape<P extends unknown[], R>(build: (db: DbOrTrx, ...values: P) => Compilable<R>): (db: DbOrTrx, ...values: P) => CompiledQuery<R> {
  // One template per engine: [SQLite, PostgreSQL].
  const templates: Array<Template | undefined> = [undefined, undefined];
  return (db, ...values) => {
    const engine = isPostgres(db) ? 1 : 0;
    let template = templates[engine];
    if (template === undefined) {
      template = compileTemplate(db, build, values.length);
      templates[engine] = template;
    }
    return run<R>(template, values);
  };
}

/** Rows per statement of compiledInsertRows at most: a power of two, so any count is a sum of at most a handful of cached statements. */
const ROWS_PER_SHAPE = 32;

/** What an insert's statement adds after its rows (an ON CONFLICT clause), built once with the template. */
type InsertFinish<T extends keyof Database & string> = (q: InsertQueryBuilder<Database, T, InsertResult>) => Compilable<unknown>;

/**
 * A one-row INSERT of `table`, compiled once per engine and list of columns (the row's
 * keys, in order), then run with each row's values: compiledShape for the plain insert,
 * whose columns are the row's own.
 */
export function compiledInsert<T extends keyof Database & string>(table: T): (db: DbOrTrx, row: Insertable<Database[T]>) => CompiledQuery {
  const rows = compiledInsertRows(table);
  return (db, row) => rows(db, [row])[0]!;
}

/**
 * INSERTs of many rows of `table` as a few statements compiled once each: the rows are
 * cut into runs of 32, 16, 8, 4, 2 and 1 rows (ROWS_PER_SHAPE), each count's statement
 * compiled once per engine and list of columns (the rows' keys, in order; consecutive
 * rows with the same keys share a statement), after `finish` (an ON CONFLICT clause,
 * without values of its own). The caller runs the statements in order, in its
 * transaction: each row is inserted as one statement of them all would insert it. A
 * statement of a new length of SQL text is not prepared again by SQLite either
 * (docs/architecture.md, "Compiled shapes").
 */
export function compiledInsertRows<T extends keyof Database & string>(
  table: T,
  finish: InsertFinish<T> = (q) => q,
): (db: DbOrTrx, rows: readonly Insertable<Database[T]>[]) => CompiledQuery[] {
  // Per engine ([SQLite, PostgreSQL]): the template of each row count and list of columns seen.
  const templates = [new Map<string, Template>(), new Map<string, Template>()];
  const template = (db: DbOrTrx, columns: string[], count: number): Template => {
    const byShape = templates[isPostgres(db) ? 1 : 0]!;
    const key = `${count} ${columns.join()}`;
    let found = byShape.get(key);
    if (found === undefined) {
      const build = (trx: DbOrTrx, ...values: unknown[]) => {
        const rows = Array.from({ length: count }, (_, r) => Object.fromEntries(columns.map((c, i) => [c, values[r * columns.length + i]])));
        return finish(trx.insertInto(table).values(rows as Insertable<Database[T]>[]));
      };
      found = compileTemplate(db, build, count * columns.length);
      byShape.set(key, found);
    }
    return found;
  };
  return (db, rows) => {
    const out: CompiledQuery[] = [];
    const names = rows.map((row) => Object.keys(row).join());
    let i = 0;
    while (i < rows.length) {
      const columns = Object.keys(rows[i]!);
      let same = 1;
      while (same < ROWS_PER_SHAPE && names[i + same] === names[i]) same++;
      const count = 2 ** Math.floor(Math.log2(same));
      const values: unknown[] = [];
      for (const row of rows.slice(i, i + count)) for (const c of columns) values.push((row as Record<string, unknown>)[c]);
      out.push(run(template(db, columns, count), values));
      i += count;
    }
    return out;
  };
}

function run<R>(template: Template, values: readonly unknown[]): CompiledQuery<R> {
  return {
    query: template.query,
    queryId: createQueryId(),
    sql: template.sql,
    parameters: template.parameters.map((p) => (p instanceof Slot ? (values[p.index] ?? null) : p)),
  } as CompiledQuery<R>;
}

function compileTemplate<P extends unknown[]>(db: DbOrTrx, build: (db: DbOrTrx, ...values: P) => Compilable<unknown>, arity: number): Template {
  const slots = Array.from({ length: arity }, (_, i) => new Slot(i));
  const compiled = build(db, ...(slots as unknown as P)).compile();
  const used = new Set(compiled.parameters.filter((p): p is Slot => p instanceof Slot).map((p) => p.index));
  const missing = slots.filter((s) => !used.has(s.index)).map((s) => s.index);
  if (missing.length > 0) throw new Error(`compiledShape: the value(s) at ${missing.join(', ')} do not reach the statement ${compiled.sql}`);
  return { sql: compiled.sql, parameters: compiled.parameters, query: compiled.query };
}
