import { expect } from 'chai';
import Database from 'better-sqlite3';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startGatewayProcess } from '../../helpers/process';

describe('stored responses survive a SIGKILL', function () {
  this.timeout(60000);

  it('every stream that ended before the kill is retrievable after restart, and the database is intact', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gw-crash-'));
    const db = join(dir, 'gateway.db');
    const config = {
      server: { host: '127.0.0.1', port: 0, log_level: 'info' },
      store: { driver: 'sqlite', path: db },
      providers: [{ name: 'mock', type: 'mock' }],
      models: [
        { id: 'm', deployments: [{ provider: 'mock', model: 'x', options: { chunk_size: 1, chunk_delay_ms: 15 } }] },
      ],
      plugins: ['storage', 'routing'],
    };
    const gw = await startGatewayProcess(config);
    const finished: string[] = [];
    let killed = false;
    // 100 streams of different lengths (2 to 101 words): the short ones end before the kill, the long ones are cut by it.
    const streams = Array.from({ length: 100 }, async (_, i) => {
      try {
        const res = await fetch(`${gw.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            model: 'm',
            stream: true,
            messages: [{ role: 'user', content: Array.from({ length: i + 2 }, (_, j) => `w${j}`).join(' ') }],
          }),
        });
        const text = await res.text();
        const id = /"id":"(chatcmpl-[^"]+)"/.exec(text)?.[1];
        if (id && text.endsWith('data: [DONE]\n\n') && !killed) finished.push(id);
      } catch {
        // cut by the kill
      }
    });
    // Kill once some streams have ended (not after a fixed time: the machine may be busy), while most still run.
    const deadline = Date.now() + 20000;
    while (finished.length < 10 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    killed = true;
    await gw.stop('SIGKILL');
    await Promise.all(streams);
    expect(finished.length, 'some streams ended before the kill').to.be.greaterThan(5);
    expect(finished.length, 'some streams were still running at the kill').to.be.lessThan(100);

    const again = await startGatewayProcess(config);
    try {
      for (const id of finished) {
        const r = await fetch(`${again.url}/responses/${id}`);
        expect(r.status, id).to.equal(200);
        expect(((await r.json()) as { status: string }).status).to.equal('completed');
      }
    } finally {
      await again.stop();
    }
    const check = new Database(db, { readonly: true });
    expect(check.pragma('integrity_check', { simple: true })).to.equal('ok');
    check.close();
  });
});
