import { performance } from 'node:perf_hooks';

/** A positive whole number from the environment, or `fallback`. */
export function intEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${name} must be a positive integer, got "${raw}"`);
  return n;
}

/** Milliseconds since the epoch, with sub-millisecond resolution (comparable across processes of one machine). */
export const now = (): number => performance.timeOrigin + performance.now();

export function quantile(sorted: number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[i] ?? Number.NaN;
}

export function describe(values: number[]): { median: number; p95: number; p99: number; max: number } {
  const s = [...values].sort((a, b) => a - b);
  return { median: quantile(s, 0.5), p95: quantile(s, 0.95), p99: quantile(s, 0.99), max: s[s.length - 1] ?? Number.NaN };
}
