import { storeStats } from '../store/stats';
import { loadConfigFile, resolveConfigPath } from '../config/load';
import type { CliCommand } from './command';
import { fail, print, withStore } from './store-cli';

const mb = (b: number) => `${(b / 1048576).toFixed(2)} MB`;

export const dbCommand: CliCommand = {
  name: 'db',
  usage: 'db stats',
  summary: 'rows and bytes per table, DB + WAL bytes, growth per 1,000 requests  (--json, --config)',
  run: (args) =>
    withStore(args, {}, async (store, v, [sub]) => {
      if (sub !== 'stats') return fail('usage: gateway db stats');
      const config = loadConfigFile(resolveConfigPath(v.config as string | undefined)).store;
      const s = await storeStats(store, config);
      if (v.json === true) {
        process.stdout.write(`${JSON.stringify(s, null, 2)}\n`);
        return 0;
      }
      print(
        s.tables.map((t) => ({ table: t.table, rows: t.rows, bytes: t.bytes })),
        false,
      );
      const p = s.perThousand;
      process.stdout.write(
        [
          '',
          `driver: ${s.driver}   database: ${mb(s.bytes)}   WAL: ${mb(s.walBytes)}   requests kept: ${s.requests}`,
          `per 1,000 requests: ${p.average === null ? 'n/a' : mb(p.average)} on average (tables and indexes)`,
          p.lastAt === null
            ? 'since last run: first run (run again later for the growth in between)'
            : `since last run (${p.lastAt}, ${p.requestsSinceLast} requests): ` +
              (p.sinceLast === null ? 'n/a' : `${mb(p.sinceLast)} per 1,000 (DB + WAL)`),
          '',
        ].join('\n'),
      );
      return 0;
    }),
};
