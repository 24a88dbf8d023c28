/**
 * @module
 * The cache plugin's CLI: `gateway cache purge ...` (by entry, key, account, model or age; --all for everything) and
 * `gateway cache set key|account ID on|off|default`, on the configured backend; each change in the audit log.
 */
import { auditCli, fail, print, withStore, type CliCommand, type GatewayConfig, type Store } from '../../src/plugin';
import { RedisBackend } from './backends/redis-backend';
import { StoreBackend } from './backends/store-backend';
import type { CacheBackend } from './backends/types';
import { purgeFilter, purgesSomething, type PurgeBody } from './purge';
import { CacheSettings } from './store/settings';

/** The backend the configured chain's cache stanza names (the store's when it names none). */
async function backendOf(config: GatewayConfig, store: Store): Promise<CacheBackend> {
  const stanza = config.plugins.find((p) => p.name === 'cache')?.config ?? {};
  if (stanza.backend !== 'redis') return new StoreBackend(store.db);
  const redis = (stanza.redis ?? {}) as { url?: string; prefix?: string };
  const backend = new RedisBackend({
    url: redis.url ?? 'redis://127.0.0.1:6379',
    prefix: redis.prefix ?? 'gw:cache:',
    timeoutMs: 5000,
  });
  await backend.connect(5000);
  return backend;
}

function purge(args: string[]): Promise<number> {
  const flags = {
    entry: { type: 'string' },
    key: { type: 'string' },
    account: { type: 'string' },
    model: { type: 'string' },
    'older-than': { type: 'string' },
    all: { type: 'boolean' },
  } as const;
  return withStore(args, flags, async (store, v, _pos, config) => {
    const age = typeof v['older-than'] === 'string' ? Number(v['older-than']) : undefined;
    if (age !== undefined && !(Number.isInteger(age) && age >= 0)) return fail('--older-than takes whole seconds');
    const body: PurgeBody = {
      ...(typeof v.entry === 'string' ? { entry: v.entry } : {}),
      ...(typeof v.key === 'string' ? { key_hash: v.key } : {}),
      ...(typeof v.account === 'string' ? { account_id: v.account } : {}),
      ...(typeof v.model === 'string' ? { model: v.model } : {}),
      ...(age !== undefined ? { older_than_seconds: age } : {}),
      ...(v.all === true ? { all: true as const } : {}),
    };
    if (!purgesSomething(body))
      return fail('cache purge needs --entry, --key, --account, --model, --older-than or --all');
    const backend = await backendOf(config, store);
    try {
      const deleted = await backend.purge(purgeFilter(body, Date.now()));
      await auditCli(store, { action: 'cache.purge', target: 'cache', before: body, after: { deleted } });
      print([{ deleted }], v.json === true);
      return 0;
    } finally {
      await backend.close();
    }
  });
}

function set(args: string[]): Promise<number> {
  return withStore(args, {}, async (store, v, [subject, id, value]) => {
    if ((subject !== 'key' && subject !== 'account') || !id || !['on', 'off', 'default'].includes(value ?? ''))
      return fail('usage: cache set key|account ID on|off|default');
    const settings = new CacheSettings(store.db);
    const enabled = value === 'default' ? null : value === 'on';
    await settings.set(subject, id, enabled);
    await auditCli(store, { action: 'cache.set', target: `${subject}:${id}`, after: { enabled } });
    print([{ subject, id, enabled }], v.json === true);
    return 0;
  });
}

export const cacheCommands: CliCommand[] = [
  {
    name: 'cache',
    usage: 'cache purge|set ...',
    summary: 'purge response cache entries; set whether a key or account uses the cache',
    help: [
      'cache purge [--entry DIGEST] [--key HASH] [--account ID] [--model ID] [--older-than SECONDS] [--all]',
      '                                  delete the entries matching every flag given',
      'cache set key|account ID on|off|default',
      '                                  opt a key or an account in or out of the response cache',
    ],
    run: (args) => {
      const [sub, ...rest] = args;
      if (sub === 'purge') return purge(rest);
      if (sub === 'set') return set(rest);
      return Promise.resolve(fail('usage: cache purge ... | cache set key|account ID on|off|default'));
    },
  },
];
