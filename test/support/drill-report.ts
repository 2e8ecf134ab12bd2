/** What a drill prints: its figures, and every violation it saw (a drill passes with none). */
export interface DrillResult {
  drill: string;
  engine: string;
  figures: Record<string, number | string>;
  violations: string[];
}

export function printResult(r: DrillResult): void {
  const status = r.violations.length === 0 ? 'ok' : `${r.violations.length} VIOLATION(S)`;
  console.log(`\n== ${r.drill} (${r.engine}): ${status}`);
  for (const [k, v] of Object.entries(r.figures)) console.log(`   ${k}: ${v}`);
  for (const v of r.violations.slice(0, 20)) console.log(`   ! ${v}`);
  if (r.violations.length > 20) console.log(`   ! … and ${r.violations.length - 20} more`);
}

export const percentile = (sorted: number[], p: number): number =>
  sorted.length === 0 ? NaN : (sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN);

export const round = (n: number, digits = 1): number => Math.round(n * 10 ** digits) / 10 ** digits;
