import type Koa from 'koa';

/**
 * JSON bodies without Node's web globals. Koa 3 tests every object body with `instanceof ReadableStream` and
 * `instanceof Response`, in its body setter and again when it writes the answer. Both names are lazy globals of
 * Node's: the first test loads the undici that Node bundles for `fetch` (the gateway uses the npm one) and compiles
 * its llhttp WebAssembly, ~3 MB that stay for good, on the first JSON answer (a health check, an error). A plain
 * object or array skips those tests here: the setter does what Koa's does for JSON, and `serializeJsonBody` (the
 * outer middleware) turns it into text before Koa writes it. Anything else goes through Koa's own setter.
 */
export function jsonBodiesWithoutWebGlobals(app: Koa): void {
  const koaResponse = Object.getPrototypeOf(app.response) as object;
  const koaBody = Object.getOwnPropertyDescriptor(koaResponse, 'body');
  if (!koaBody?.get || !koaBody.set) throw new Error('Koa response has no body accessor');
  const koaSet = koaBody.set;
  Object.defineProperty(app.response, 'body', {
    configurable: true,
    enumerable: koaBody.enumerable,
    get: koaBody.get,
    set(this: Koa.Response & { _body: unknown }, val: unknown) {
      // Replacing a stream: Koa's setter also ends that stream.
      if (!isJsonValue(val) || hasPipe(this._body)) return void koaSet.call(this, val);
      // koa/lib/response.js, `set body`, for a JSON value:
      this._body = val;
      if (!(this as { _explicitStatus?: boolean })._explicitStatus) this.status = 200;
      this.remove('Content-Length');
      if (!this.type || !/\bjson\b/i.test(this.type)) this.type = 'json';
    },
  });
}

/** Write a JSON body as text, which Koa sends as it is (with its Content-Length); its type stays JSON. */
export function serializeJsonBody(ctx: Koa.Context): void {
  if (ctx.respond === false || ctx.headerSent) return;
  const body: unknown = ctx.body;
  if (isJsonValue(body)) ctx.body = JSON.stringify(body);
}

function isJsonValue(v: unknown): v is object {
  if (typeof v !== 'object' || v === null) return false;
  if (Array.isArray(v)) return true;
  const proto = Object.getPrototypeOf(v) as unknown;
  return proto === Object.prototype || proto === null;
}

function hasPipe(v: unknown): boolean {
  return typeof v === 'object' && v !== null && typeof (v as { pipe?: unknown }).pipe === 'function';
}
