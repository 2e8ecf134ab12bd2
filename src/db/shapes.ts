import { createQueryId, type Compilable, type CompiledQuery, type Insertable } from 'kysely';
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

/**
 * A one-row INSERT of `table`, compiled once per engine and list of columns (the row's
 * keys, in order), then run with each row's values: compiledShape for the plain insert,
 * whose columns are the row's own.
 */
export function compiledInsert<T extends keyof Database & string>(table: T): (db: DbOrTrx, row: Insertable<Database[T]>) => CompiledQuery {
  // Per engine ([SQLite, PostgreSQL]): the template of each list of columns seen.
  const templates = [new Map<string, Template>(), new Map<string, Template>()];
  return (db, row) => {
    const columns = Object.keys(row);
    const byColumns = templates[isPostgres(db) ? 1 : 0]!;
    const names = columns.join();
    let template = byColumns.get(names);
    if (template === undefined) {
      const build = (trx: DbOrTrx, ...values: unknown[]) =>
        trx.insertInto(table).values(Object.fromEntries(columns.map((c, i) => [c, values[i]])) as Insertable<Database[T]>);
      template = compileTemplate(db, build, columns.length);
      byColumns.set(names, template);
    }
    const values = columns.map((c) => (row as Record<string, unknown>)[c]);
    return run(template, values);
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
