// Renders the OpenAPI document as one self-contained HTML page: no script, no CDN.

const esc = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** A small Markdown subset: headings, tables, lists, `code`, **bold**, paragraphs. */
export function markdown(md: string): string {
  const inline = (s: string): string =>
    esc(s)
      .replace(/`([^`]+)`/g, '<code>$1</code>')
      .replace(/\*\*([^*]+)\*\*/g, '<strong>$1</strong>');
  const out: string[] = [];
  const lines = md.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? '';
    if (line.startsWith('```')) {
      const code: string[] = [];
      for (i++; i < lines.length && !(lines[i] ?? '').startsWith('```'); i++) code.push(lines[i] ?? '');
      out.push(`<pre><code>${esc(code.join('\n'))}</code></pre>`);
    } else if (line.startsWith('## ')) out.push(`<h2 id="${esc(line.slice(3).toLowerCase())}">${inline(line.slice(3))}</h2>`);
    else if (line.startsWith('|')) {
      const rows: string[][] = [];
      while (i < lines.length && (lines[i] ?? '').startsWith('|')) {
        const cells = (lines[i] ?? '').slice(1, -1).split(' | ').map((c) => c.trim().replace(/^\|\s*|\s*\|$/g, ''));
        if (!cells.every((c) => /^-+$/.test(c))) rows.push(cells);
        i++;
      }
      i--;
      const [head, ...body] = rows;
      out.push(
        `<table><thead><tr>${(head ?? []).map((c) => `<th>${inline(c)}</th>`).join('')}</tr></thead><tbody>${body
          .map((r) => `<tr>${r.map((c) => `<td>${inline(c)}</td>`).join('')}</tr>`)
          .join('')}</tbody></table>`,
      );
    } else if (line.startsWith('- ')) {
      const items: string[] = [];
      while (i < lines.length && (lines[i] ?? '').startsWith('- ')) {
        items.push(`<li>${inline((lines[i] ?? '').slice(2))}</li>`);
        i++;
      }
      i--;
      out.push(`<ul>${items.join('')}</ul>`);
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

function fieldsTable(s: Schema | undefined): string {
  if (!s?.properties) return '';
  const rows = Object.entries(s.properties).map(
    ([name, p]) =>
      `<tr><td><code>${esc(name)}</code></td><td>${esc(typeOf(p))}</td><td>${s.required?.includes(name) ? 'yes' : 'no'}</td><td>${esc(constraints(p))}</td><td>${esc(p.description ?? '')}</td></tr>`,
  );
  return `<table><thead><tr><th>field</th><th>type</th><th>required</th><th>rule</th><th>notes</th></tr></thead><tbody>${rows.join('')}</tbody></table>`;
}

export function renderDocsPage(doc: Record<string, unknown>): string {
  const info = doc.info as { title: string; version: string; description: string };
  const paths = doc.paths as Record<string, Record<string, { summary?: string; description?: string; parameters?: Array<{ name: string; in: string; required?: boolean; description?: string; schema?: Schema }>; requestBody?: { content: Record<string, { schema: Schema }> }; responses: Record<string, { description?: string; content?: Record<string, { schema: Schema }> }> }>>;
  const sections: string[] = [];
  for (const [path, ops] of Object.entries(paths)) {
    for (const [method, op] of Object.entries(ops)) {
      const params = (op.parameters ?? []).filter((p) => p.in === 'query');
      const body = op.requestBody?.content['application/json']?.schema;
      const ok = op.responses['200']?.content?.['application/json']?.schema;
      const errors = Object.entries(op.responses)
        .filter(([status]) => status !== '200')
        .map(([status, r]) => `<tr><td>${esc(status)}</td><td>${esc(r.description ?? '')}</td></tr>`)
        .join('');
      sections.push(`<section><h3><span class="m">${method.toUpperCase()}</span> <code>${esc(path.replace(/\{slug\}/, '{slug}'))}</code></h3>
<p><strong>${esc(op.summary ?? '')}</strong></p><p>${esc(op.description ?? '')}</p>
${params.length ? `<h4>Query parameters</h4><table><tbody>${params.map((p) => `<tr><td><code>${esc(p.name)}</code></td><td>${esc(p.schema ? typeOf(p.schema) : '')}</td><td>${esc(p.description ?? p.schema?.description ?? '')}</td></tr>`).join('')}</tbody></table>` : ''}
${body ? `<h4>Request body</h4>${fieldsTable(body.properties?.guests?.items ?? body)}${body.properties?.guests ? fieldsTable(body) : ''}` : ''}
${ok ? `<h4>Response 200</h4>${fieldsTable(ok)}` : ''}
<h4>Error responses</h4><table><thead><tr><th>HTTP</th><th>codes</th></tr></thead><tbody>${errors}</tbody></table></section>`);
    }
  }
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(info.title)} ${esc(info.version)}</title>
<style>body{font:15px/1.5 system-ui,sans-serif;max-width:1100px;margin:2rem auto;padding:0 1rem;color:#1d2733}
table{border-collapse:collapse;width:100%;margin:.5rem 0 1rem}th,td{border:1px solid #d5dbe3;padding:.3rem .5rem;text-align:left;vertical-align:top}
th{background:#f2f5f8}code{background:#f2f5f8;padding:0 .2rem;border-radius:3px}section{border-top:2px solid #d5dbe3;margin-top:2rem}
pre{background:#f2f5f8;padding:.6rem .8rem;border-radius:4px;overflow:auto}pre code{padding:0}
.m{background:#1d4ed8;color:#fff;padding:.1rem .4rem;border-radius:3px;font-size:.85em}</style></head>
<body><h1>${esc(info.title)} <small>v${esc(info.version)}</small></h1>
<p>Machine-readable: <a href="/api/pms/v1/openapi.json">openapi.json</a> (OpenAPI 3.1). Base path: <code>/api/pms/v1/{slug}</code>.</p>
${markdown(info.description)}
<h2 id="endpoints">Endpoints</h2>
${sections.join('\n')}
</body></html>`;
}
