/** Calls to the gateway's console API: same origin, session cookie, CSRF header on writes. */
export type Role = 'account' | 'viewer' | 'operator' | 'admin';

export interface Me {
  is_admin: boolean;
  role: Role;
  session_id: string;
  opened_with: 'admin_key' | 'key' | 'sso';
  key_label: string;
  csrf_token: string;
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
  const text = await res.text();
  const json = text ? (JSON.parse(text) as Record<string, unknown>) : {};
  if (!res.ok) {
    const e = (json.error ?? {}) as { code?: string; message?: string };
    throw new ApiError(res.status, e.code ?? 'error', e.message ?? `HTTP ${res.status}`);
  }
  return json as T;
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
