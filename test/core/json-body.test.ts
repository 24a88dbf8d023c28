import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import Koa from 'koa';
import { jsonBodiesWithoutWebGlobals, serializeJsonBody } from '../../src/http/json-body';

interface Answer {
  status: number;
  type: string | undefined;
  length: string | undefined;
  body: string;
}

function get(url: string, method = 'GET'): Promise<Answer> {
  return new Promise((resolve, reject) => {
    request(url, { method }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () =>
        resolve({
          status: res.statusCode!,
          type: res.headers['content-type'],
          length: res.headers['content-length'],
          body,
        }),
      );
    })
      .on('error', reject)
      .end();
  });
}

const routes: Koa.Middleware = (ctx) => {
  if (ctx.path === '/object') ctx.body = { a: 1, b: [true, null] };
  else if (ctx.path === '/array') ctx.body = [1, 'two'];
  else if (ctx.path === '/created') {
    ctx.status = 201;
    ctx.body = { id: 'x' };
  } else if (ctx.path === '/problem') {
    ctx.type = 'application/problem+json';
    ctx.body = { title: 'no' };
  } else if (ctx.path === '/emptied') {
    ctx.body = { a: 1 };
    ctx.body = null;
  } else if (ctx.path === '/no-content') {
    ctx.status = 204;
    ctx.body = { a: 1 };
  } else if (ctx.path === '/replaced-stream') {
    const s = new PassThrough();
    s.on('close', () => (ctx.state.destroyed as string[]).push(ctx.app.env));
    ctx.body = s;
    ctx.body = { after: 'stream' };
  } else if (ctx.path === '/instance')
    ctx.body = new (class Thing {
      toJSON() {
        return { thing: true };
      }
    })();
};
const PATHS = ['/object', '/array', '/created', '/problem', '/emptied', '/no-content', '/replaced-stream', '/instance'];

describe('JSON bodies without the web globals', () => {
  const servers: Server[] = [];
  const destroyed: string[] = [];
  let plain: string;
  let patched: string;
  async function serve(app: Koa): Promise<string> {
    app.use(async (ctx, next) => {
      ctx.state.destroyed = destroyed;
      await next();
    });
    app.use(routes);
    const server = createServer(app.callback());
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }
  before(async () => {
    plain = await serve(new Koa({ env: 'plain' }));
    const app = new Koa({ env: 'patched' });
    jsonBodiesWithoutWebGlobals(app);
    app.use(async (ctx, next) => {
      await next();
      serializeJsonBody(ctx);
    });
    patched = await serve(app);
  });
  after(() => Promise.all(servers.map((s) => new Promise<void>((r) => s.close(() => r())))));

  it("answers every JSON body exactly as Koa's own setter and respond do (GET and HEAD)", async () => {
    for (const path of PATHS)
      for (const method of ['GET', 'HEAD']) {
        const ours = await get(patched + path, method);
        expect(ours, `${method} ${path}`).to.deep.equal(await get(plain + path, method));
      }
    expect(await get(`${patched}/object`)).to.deep.equal({
      status: 200,
      type: 'application/json; charset=utf-8',
      length: '23',
      body: '{"a":1,"b":[true,null]}',
    });
  });

  it('a stream replaced by an object is ended, as Koa does', async () => {
    destroyed.length = 0;
    await get(`${patched}/replaced-stream`);
    await get(`${plain}/replaced-stream`);
    expect(destroyed.sort()).to.deep.equal(['patched', 'plain']);
  });

  it("the gateway's JSON answers and errors never load Node's bundled undici or its web streams", () => {
    const root = join(__dirname, '..', '..');
    const script = `
      const { request } = require('node:http');
      const { startTestGateway } = require('./test/helpers/gateway.ts');
      const get = (url, method) => new Promise((res, rej) =>
        request(url, { method }, (r) => { r.resume(); r.on('end', () => res(r.statusCode)); }).on('error', rej).end());
      (async () => {
        const gw = await startTestGateway();
        const statuses = [await get(gw.url + '/health'), await get(gw.url + '/v1/models'), await get(gw.url + '/nope'),
          await get(gw.url + '/health', 'HEAD')];
        await gw.stop();
        const loaded = process.moduleLoadList.filter((m) => /deps\\/undici|webstreams\\/readablestream/.test(m));
        process.stdout.write(JSON.stringify({ statuses, loaded }));
      })();`;
    const out = execFileSync(process.execPath, ['--require', 'tsx/cjs', '-e', script], { cwd: root, encoding: 'utf8' });
    expect(JSON.parse(out)).to.deep.equal({ statuses: [200, 200, 404, 200], loaded: [] });
  });
});
