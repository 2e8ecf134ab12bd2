// The one place that talks to /dashboard/api. Every call is same-origin with the
// session cookie; state-changing calls carry the CSRF token the session handed out.

import { t } from './i18n.js';
import { serverMessage } from './server-messages.js';

const BASE = '/dashboard/api';
const UNSAFE = new Set(['POST', 'PATCH', 'PUT', 'DELETE']);

let csrfToken = null;
let onUnauthorized = () => {};
let refreshCsrf = null;

export function setCsrfToken(token) {
  csrfToken = token ?? null;
}

/** Called on any 401 (except from login itself): the app shows the login page. */
export function setUnauthorizedHandler(fn) {
  onUnauthorized = fn;
}

/**
 * Called once when a write is refused with CSRF_REJECTED (the session was replaced, e.g.
 * by a login in another tab): returns the current token, or null to give up.
 */
export function setCsrfRefresher(fn) {
  refreshCsrf = fn;
}

/** An error answer of the API (or a network failure, status 0), with the envelope's members. */
class ApiError extends Error {
  constructor(status, body, retryAfter) {
    super(body?.message ? serverMessage(body) : t('The server answered HTTP {status}.', { status }));
    this.name = 'ApiError';
    this.status = status;
    this.code = body?.code ?? null;
    this.requestId = body?.requestId ?? null;
    this.errors = Array.isArray(body?.errors) ? body.errors : [];
    this.body = body ?? {};
    this.retryAfter = retryAfter ?? body?.retryAfter ?? null;
  }
}

/** "?a=1&b=2" from an object, skipping empty values. */
export function query(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params ?? {})) {
    if (v !== null && v !== undefined && v !== '') q.set(k, String(v));
  }
  const s = q.toString();
  return s ? `?${s}` : '';
}

/**
 * request('GET', '/guests') → parsed JSON body.
 * Options: body (JSON-encoded), signal, authRedirect (false for login/setup, whose 401
 * means "wrong password" and not "session gone").
 */
async function request(method, path, { body, signal, authRedirect = true, retried = false, background = false } = {}) {
  const headers = { Accept: 'application/json' };
  // A refetch the page makes by itself (after a live event) does not count as the user
  // being active: the session's idle expiry keeps running (docs/dashboard.md).
  if (background) headers['X-Background-Refresh'] = '1';
  const init = { method, headers, credentials: 'same-origin', signal, cache: 'no-store' };
  if (UNSAFE.has(method)) {
    if (csrfToken) headers['X-CSRF-Token'] = csrfToken;
    // Always a JSON body on state-changing calls: the server only accepts
    // application/json there (a cross-site form cannot send it).
    headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body ?? {});
  }
  let res;
  try {
    res = await fetch(BASE + path, init);
  } catch (err) {
    if (err?.name === 'AbortError') throw err;
    throw new ApiError(0, { code: 'NETWORK_ERROR', message: 'The server cannot be reached.' });
  }
  const data = await readJson(res);
  if (res.ok) return data ?? {};
  // The server refuses a stale token before doing anything, so one retry is safe.
  if (res.status === 403 && data?.code === 'CSRF_REJECTED' && UNSAFE.has(method) && !retried && refreshCsrf && csrfToken) {
    const token = await refreshCsrf();
    if (token) return request(method, path, { body, signal, authRedirect, retried: true });
  }
  const retryAfter = Number(res.headers.get('Retry-After')) || null;
  const error = new ApiError(res.status, data ?? { message: t('The server answered HTTP {status}.', { status: res.status }) }, retryAfter);
  if (res.status === 401 && authRedirect) onUnauthorized(error);
  throw error;
}

async function readJson(res) {
  const text = await res.text();
  if (!text) return null;
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

export const api = {
  get: (path, opts) => request('GET', path, opts),
  post: (path, body, opts) => request('POST', path, { ...opts, body }),
  patch: (path, body, opts) => request('PATCH', path, { ...opts, body }),
  del: (path, opts) => request('DELETE', path, opts),
};

export const enc = encodeURIComponent;
