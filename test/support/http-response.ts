import type { Dispatcher } from 'undici';

// One reading of an HTTP answer for the tests, the drills and the benchmarks: headers
// flattened to strings, the body as text and, when it is JSON, parsed.

/** Header values as single strings (repeated headers joined with ", "). */
export function flatHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) if (v !== undefined) flat[k] = Array.isArray(v) ? v.join(', ') : v;
  return flat;
}

export interface ReadResponse {
  status: number;
  headers: Record<string, string>;
  /** The body parsed as JSON; `fallback(text)` when it is not JSON. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- callers read arbitrary members
  body: any;
  text: string;
}

/** Reads an undici answer whole. A body that is not JSON becomes `notJson(text)` (default null). */
export async function readResponse(res: Dispatcher.ResponseData, notJson: (text: string) => unknown = () => null): Promise<ReadResponse> {
  const text = await res.body.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = notJson(text);
  }
  return { status: res.statusCode, headers: flatHeaders(res.headers), body, text };
}
