/** Calls to the gateway's console API: same origin, session cookie, CSRF header on writes. */
export type Role = 'account' | 'viewer' | 'operator' | 'admin';

export interface Me {
  is_admin: boolean;
  role: Role;
  session_id: string;
  opened_with: 'admin_key' | 'key' | 'sso';
  key_label: string;
  csrf_token: string;
  /** What this gateway calls a credit (console.credit_unit). */
  credit_unit?: string;
  account: { id: string; name: string; credits: number; usage: number } | null;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

let csrf = '';

export function setCsrf(token: string): void {
  csrf = token;
}

export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = {};
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET') headers['x-csrf-token'] = csrf;
  const res = await fetch(`/console/api/${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: 'same-origin',
  });
  const json = await readJson(res);
  if (!res.ok) {
    const e = (json.error ?? {}) as { code?: string; message?: string };
    throw new ApiError(res.status, e.code ?? 'error', e.message ?? `HTTP ${res.status}`);
  }
  return json as T;
}

/**
 * The body as JSON; anything else (an HTML error page from a proxy in front of the gateway, a cut body) becomes an
 * ApiError that says in words what came back, never a parser's "Unexpected token '<'".
 */
export async function readJson(res: Response): Promise<Record<string, unknown>> {
  const text = await res.text().catch(() => '');
  if (!text) {
    if (res.ok) return {};
    throw new ApiError(
      res.status,
      'empty_answer',
      `The gateway answered ${statusText(res)} with no details; try again.`,
    );
  }
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch {
    const what = res.ok ? 'an answer that is not JSON' : statusText(res);
    throw new ApiError(
      res.ok ? 502 : res.status,
      'not_json',
      `The console got ${what} (${res.headers.get('content-type') ?? 'no content type'}) instead of the gateway's ` +
        'JSON: a proxy or load balancer in front of the gateway may have answered. Try again in a moment.',
    );
  }
}

function statusText(res: Response): string {
  return `HTTP ${res.status}${res.statusText ? ` ${res.statusText}` : ''}`;
}

export function query(params: Record<string, string | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v) q.set(k, v);
  const s = q.toString();
  return s ? `?${s}` : '';
}

const RANK: Record<Role, number> = { account: 0, viewer: 1, operator: 2, admin: 3 };

/** Whether the signed-in role is at least `least` (the server checks every call anyway: this only hides controls). */
export function atLeast(me: Me, least: Role): boolean {
  return RANK[me.role] >= RANK[least];
}
