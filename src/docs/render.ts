// Renders the OpenAPI document as one self-contained HTML page: no script, no CDN.

const esc = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** A heading's id: its words in lower case joined by hyphens ("Events (webhooks)" → "events-webhooks"). */
const headingId = (text: string): string =>
  text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');

const inline = (s: string): string =>
  esc(s)
    .replace(/`([^`]+)`/g, '<code>$1</code>')
    .replace(/\*\*([^*]+)\*\*/g, '<strong>$1</strong>');

/** The lines from `i` that start with `prefix`, and the index of the last one. */
function block(lines: string[], i: number, prefix: string): { items: string[]; last: number } {
  const items: string[] = [];
  let j = i;
  for (; j < lines.length && (lines[j] ?? '').startsWith(prefix); j++) items.push(lines[j] ?? '');
  return { items, last: j - 1 };
}

function table(rows: string[]): string {
  const cells = rows.filter((r) => !/^[|\s:-]+$/.test(r)).map((r) => r.slice(1, -1).split(' | ').map((c) => c.trim()));
  const [head, ...body] = cells;
  return `<table><thead><tr>${(head ?? []).map((c) => `<th>${inline(c)}</th>`).join('')}</tr></thead><tbody>${body
    .map((r) => `<tr>${r.map((c) => `<td>${inline(c)}</td>`).join('')}</tr>`)
    .join('')}</tbody></table>`;
}

/** A small Markdown subset: headings (## and ###, with ids), tables, lists, `code`, **bold**, code blocks, paragraphs. */
function markdown(md: string): string {
  const out: string[] = [];
  const lines = md.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? '';
    const heading = /^(##|###) (.*)$/.exec(line);
    if (line.startsWith('```')) {
      const code: string[] = [];
      for (i++; i < lines.length && !(lines[i] ?? '').startsWith('```'); i++) code.push(lines[i] ?? '');
      out.push(`<pre><code>${esc(code.join('\n'))}</code></pre>`);
    } else if (heading) {
      const level = (heading[1] ?? '').length;
      out.push(`<h${level} id="${headingId(heading[2] ?? '')}">${inline(heading[2] ?? '')}</h${level}>`);
    } else if (line.startsWith('|') || line.startsWith('- ')) {
      const { items, last } = block(lines, i, line.slice(0, 1));
      out.push(line.startsWith('|') ? table(items) : `<ul>${items.map((l) => `<li>${inline(l.slice(2))}</li>`).join('')}</ul>`);
      i = last;
    } else if (line.trim() !== '') out.push(`<p>${inline(line)}</p>`);
  }
  return out.join('\n');
}

interface Schema {
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  description?: string;
  format?: string;
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  maxItems?: number;
  const?: unknown;
  enum?: unknown[];
  anyOf?: Schema[];
}

interface Example {
  summary?: string;
  value: unknown;
}

interface Media {
  schema: Schema;
  examples?: Record<string, Example>;
}

interface Operation {
  operationId?: string;
  summary?: string;
  description?: string;
  parameters?: Array<{ name: string; in: string; description?: string; schema?: Schema }>;
  requestBody?: { content: Record<string, Media> };
  responses: Record<string, { description?: string; content?: Record<string, Media> }>;
  'x-codeSamples'?: Array<{ lang: string; source: string }>;
}

function typeOf(s: Schema): string {
  if (s.anyOf) return s.anyOf.map(typeOf).join(' | ');
  if (s.const !== undefined) return JSON.stringify(s.const);
  // A long list (the assigned language and country codes) is named by its format instead.
  if (s.enum && s.enum.length <= 12) return s.enum.map((v) => JSON.stringify(v)).join(' | ');
  const t = Array.isArray(s.type) ? s.type.join(' | ') : (s.type ?? 'any');
  return t === 'array' && s.items ? `array of ${typeOf(s.items)}` : t;
}

function constraints(s: Schema): string {
  const c: string[] = [];
  if (s.format) c.push(`format ${s.format}`);
  if (s.minLength !== undefined || s.maxLength !== undefined) c.push(`length ${s.minLength ?? 0}-${s.maxLength ?? '∞'}`);
  if (s.minimum !== undefined || s.maximum !== undefined) c.push(`${s.minimum ?? '-∞'}-${s.maximum ?? '∞'}`);
  if (s.maxItems !== undefined) c.push(`at most ${s.maxItems} items`);
  return c.join(', ');
}

/**
 * One row per member, and below an object's (or a list of objects') row, its own members
 * (`summary.received`, `guests[].roomNumber`); `flat` lists the top level only.
 */
function fieldRows(s: Schema, prefix: string, flat: boolean): string[] {
  return Object.entries(s.properties ?? {}).flatMap(([name, p]) => {
    const row = `<tr><td><code>${esc(prefix + name)}</code></td><td>${esc(typeOf(p))}</td><td>${s.required?.includes(name) ? 'yes' : 'no'}</td><td>${esc(constraints(p))}</td><td>${inline(p.description ?? '')}</td></tr>`;
    const inner = p.properties ? [p, `${prefix}${name}.`] : p.items?.properties ? [p.items, `${prefix}${name}[].`] : null;
    return flat || !inner ? [row] : [row, ...fieldRows(inner[0] as Schema, inner[1] as string, false)];
  });
}

function fieldsTable(s: Schema | undefined, flat = false): string {
  if (!s?.properties) return '';
  return `<table><thead><tr><th>member</th><th>type</th><th>required</th><th>rule</th><th>meaning</th></tr></thead><tbody>${fieldRows(s, '', flat).join('')}</tbody></table>`;
}

const json = (value: unknown): string => `<pre><code>${esc(JSON.stringify(value, null, 2))}</code></pre>`;

/** The examples of a request or an answer, each folded under its name and summary (`open`: the first unfolded). */
function examplesHtml(examples: Record<string, Example> | undefined, label: (name: string) => string, open = false): string {
  return Object.entries(examples ?? {})
    .map(
      ([name, e], i) =>
        `<details${open && i === 0 ? ' open' : ''}><summary>${label(name)}<code>${esc(name)}</code>: ${inline(e.summary ?? '')}</summary>${json(e.value)}</details>`,
    )
    .join('\n');
}

/** The HTTP status whose examples answer the request example `name`. */
function answeredWith(op: Operation, name: string): string {
  return Object.entries(op.responses).find(([, r]) => r.content?.['application/json']?.examples?.[name])?.[0] ?? '';
}

function requestHtml(id: string, op: Operation): string {
  const media = op.requestBody?.content['application/json'];
  if (!media) return '';
  const body = media.schema;
  const items = body.properties?.guests?.items;
  // A sync: its own members first, then those of each listed guest.
  const tables = items ? `<p>Top-level members:</p>${fieldsTable(body, true)}<p>Each item of <code>guests</code>:</p>${fieldsTable(items)}` : fieldsTable(body);
  const examples = examplesHtml(media.examples, (name) => `answered ${answeredWith(op, name)}: `);
  return `<h4 id="${id}-request">Request body</h4>\n${tables}\n<p>Examples (each answered as the response example of the same name):</p>\n${examples}`;
}

function responsesHtml(id: string, op: Operation): string {
  const ok = op.responses['200']?.content?.['application/json'];
  const errors = Object.entries(op.responses).filter(([status]) => status !== '200');
  const rows = errors.map(([status, r]) => `<tr><td>${esc(status)}</td><td>${esc(r.description ?? '')}</td></tr>`).join('');
  const errorExamples = errors.map(([status, r]) => examplesHtml(r.content?.['application/json']?.examples, () => `${esc(status)} `)).join('\n');
  return `${ok ? `<h4 id="${id}-response">Response 200</h4>\n${fieldsTable(ok.schema)}\n${examplesHtml(ok.examples, () => '200 ', true)}` : ''}
<h4 id="${id}-errors">Error responses</h4><table><thead><tr><th>HTTP</th><th>codes</th></tr></thead><tbody>${rows}</tbody></table>
<p>Example bodies:</p>
${errorExamples}`;
}

function operationHtml(path: string, method: string, op: Operation): string {
  const id = op.operationId ?? headingId(`${method} ${path}`);
  const params = (op.parameters ?? []).filter((p) => p.in === 'query');
  const curl = op['x-codeSamples']?.[0]?.source;
  return `<section><h3 id="${id}"><span class="m">${method.toUpperCase()}</span> <code>${esc(path)}</code>: ${esc(op.summary ?? '')}</h3>
<p>${inline(op.description ?? '')}</p>
${curl ? `<h4 id="${id}-curl">Try it</h4><p>Replace <code>${esc('<host>')}</code>, <code>${esc('<slug>')}</code> and the key (and send a fresh <code>Idempotency-Key</code> per change).</p><pre><code>${esc(curl)}</code></pre>` : ''}
${params.length ? `<h4 id="${id}-query">Query parameters</h4><table><tbody>${params.map((p) => `<tr><td><code>${esc(p.name)}</code></td><td>${esc(p.schema ? typeOf(p.schema) : '')}</td><td>${esc(p.description ?? p.schema?.description ?? '')}</td></tr>`).join('')}</tbody></table>` : ''}
${requestHtml(id, op)}
${responsesHtml(id, op)}</section>`;
}

interface Heading {
  level: number;
  id: string;
  html: string;
}

const link = (h: Heading): string => `<a href="#${h.id}">${h.html.replace(/<(?!\/?code>)[^>]+>/g, '')}</a>`;

/** The table of contents: every h2 of the page with its h3s, an h3's h4s as links after it. */
function tableOfContents(html: string): string {
  const tree: Array<{ h: Heading; subs: Array<{ h: Heading; parts: Heading[] }> }> = [];
  for (const m of html.matchAll(/<h([234]) id="([^"]+)">([\s\S]*?)<\/h\1>/g)) {
    const h = { level: Number(m[1]), id: m[2] ?? '', html: m[3] ?? '' };
    if (h.level === 2) tree.push({ h, subs: [] });
    else if (h.level === 3) tree.at(-1)?.subs.push({ h, parts: [] });
    else tree.at(-1)?.subs.at(-1)?.parts.push(h);
  }
  const sub = ({ h, parts }: { h: Heading; parts: Heading[] }): string => `<li>${[link(h), ...parts.map(link)].join(' · ')}</li>`;
  const items = tree.map(({ h, subs }) => `<li>${link(h)}${subs.length ? `<ul>${subs.map(sub).join('')}</ul>` : ''}</li>`);
  return `<nav id="contents"><h2>Contents</h2><ul>${items.join('')}</ul></nav>`;
}

export function renderDocsPage(doc: Record<string, unknown>): string {
  const info = doc.info as { title: string; version: string; description: string };
  const paths = doc.paths as Record<string, Record<string, Operation>>;
  const sections = Object.entries(paths).flatMap(([path, ops]) => Object.entries(ops).map(([method, op]) => operationHtml(path, method, op)));
  const described = markdown(info.description);
  // The endpoints follow the first section (the rules every call obeys).
  const at = described.indexOf('<h2 ', described.indexOf('<h2 ') + 1);
  const endpoints = `<h2 id="endpoints">Endpoints</h2>\n${sections.join('\n')}\n`;
  const main = at < 0 ? described + endpoints : described.slice(0, at) + endpoints + described.slice(at);
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(info.title)} ${esc(info.version)}</title>
<style>body{font:15px/1.5 system-ui,sans-serif;max-width:1100px;margin:2rem auto;padding:0 1rem;color:#1d2733}
table{border-collapse:collapse;width:100%;margin:.5rem 0 1rem}th,td{border:1px solid #d5dbe3;padding:.3rem .5rem;text-align:left;vertical-align:top}
th{background:#f2f5f8}code{background:#f2f5f8;padding:0 .2rem;border-radius:3px}section{border-top:2px solid #d5dbe3;margin-top:2rem}
pre{background:#f2f5f8;padding:.6rem .8rem;border-radius:4px;overflow:auto}pre code{padding:0}details{margin:.3rem 0}summary{cursor:pointer}
nav ul{margin:.2rem 0}.m{background:#1d4ed8;color:#fff;padding:.1rem .4rem;border-radius:3px;font-size:.85em}</style></head>
<body><main><h1>${esc(info.title)} <small>v${esc(info.version)}</small></h1>
<p>Machine-readable: <a href="/api/pms/v1/openapi.json">openapi.json</a> (OpenAPI 3.1, with the examples below). Base URL: <code>${esc('https://<host>/api/pms/v1/<slug>')}</code>.</p>
${tableOfContents(main)}
${main}
</main></body></html>`;
}
