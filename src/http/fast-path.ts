import type Koa from 'koa';
import type { RequestListener } from 'node:http';

/**
 * The hot route, spelt exactly, skips Koa's request handling (its finish watcher, compose and respond): the same
 * context and the same outer middleware; the route's handler writes the answer, this an error body. Every other
 * request goes to Koa as usual.
 */
export function fastPathListener(
  app: Koa,
  route: { method: string; path: string; handle: (ctx: Koa.Context) => Promise<void> },
  outer: Koa.Middleware,
): RequestListener {
  const koaListener = app.callback();
  return (req, res) => {
    if (req.method !== route.method || req.url !== route.path) return void koaListener(req, res);
    const ctx = app.createContext(req, res);
    res.statusCode = 404;
    (outer(ctx, () => route.handle(ctx)) as Promise<void>).then(
      () => writeKoaBody(ctx),
      () => (res.headersSent ? res.destroy() : res.writeHead(500).end()),
    );
  };
}

/** What Koa's respond does for the chat route's error bodies (JSON objects, or text with its type set). */
function writeKoaBody(ctx: Koa.Context): void {
  if (ctx.respond === false || ctx.headerSent || !ctx.writable) return;
  const body: unknown = ctx.body;
  if (body === undefined || body === null) return void ctx.res.end();
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  ctx.length = Buffer.byteLength(text);
  ctx.res.end(text);
}
