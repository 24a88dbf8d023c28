/**
 * Where the console is: `#/<page>?<query>`. A page may follow changes of its own query (a deep link such as
 * `#/keys?key=<hash>` opened from another row, the Back button) without being drawn again, so its lists keep their
 * search and page.
 */
export interface Route {
  page: string;
  query: URLSearchParams;
}

export function route(): Route {
  const [page, q = ''] = location.hash.replace(/^#\/?/, '').split('?');
  return { page: page || 'overview', query: new URLSearchParams(q) };
}

type Follower = (query: URLSearchParams) => void;
let follower: Follower | undefined;

/** The page drawn now follows its query's changes (main.ts forgets the follower before it draws a page). */
export function followQuery(fn: Follower): void {
  follower = fn;
}

export function forgetFollower(): void {
  follower = undefined;
}

/** The follower of the page drawn, if it has one. */
export function queryFollower(): Follower | undefined {
  return follower;
}

/** The console's address of a key's or an account's settings (the Accounts & keys page opens them). */
export function settingsHref(subject: 'key' | 'account', id: string): string {
  return `/console#/keys?${subject}=${encodeURIComponent(id)}`;
}
