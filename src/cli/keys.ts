import { keyJson } from '../api/admin';
import { generateKey, hashKey, keyLabel } from '../auth/key-format';
import type { LimitReset } from '../store/keys';
import { toNano } from '../store/money';
import type { CliCommand } from './commands';
import { fail, print, withStore } from './store-cli';
import { runScan } from './scan';
import { runLimits } from './limits';

const RESETS = ['daily', 'weekly', 'monthly'];

export const keysCommand: CliCommand = {
  name: 'keys',
  usage: 'keys create|list|disable|delete|scan|limits',
  summary: 'keys create --account ID --name N [--limit C] [--reset daily|weekly|monthly]; keys list [--account ID]; keys disable|delete HASH; keys scan PATH; keys limits HASH [--models ids,globs|all|none] [--rpm N] [--tpm N] [--concurrency N]',
  run: async (args) =>
    args[0] === 'limits' ? runLimits('key', args.slice(1)) :
    args[0] === 'scan' ? runScan(args.slice(1)) : withStore(args, { account: { type: 'string' }, name: { type: 'string' }, limit: { type: 'string' }, reset: { type: 'string' } }, async (store, v, [sub, hash]) => {
      const json = v.json === true;
      if (sub === 'create') {
        if (typeof v.account !== 'string' || typeof v.name !== 'string') return fail('keys create needs --account and --name');
        if (!(await store.accounts.get(v.account))) return fail(`no account '${v.account}'`);
        const limit = v.limit === undefined ? null : Number(v.limit);
        if (limit !== null && (!Number.isFinite(limit) || limit < 0)) return fail('--limit must be a number >= 0');
        if (v.reset !== undefined && !RESETS.includes(v.reset as string)) return fail('--reset must be daily, weekly or monthly');
        const raw = generateKey();
        const k = await store.keys.create({ hash: hashKey(raw), accountId: v.account, name: v.name, label: keyLabel(raw), limit: limit === null ? null : toNano(limit), limitReset: (v.reset as LimitReset | undefined) ?? null });
        // The only time the key is shown.
        print([{ key: raw, ...keyJson(k) }], json);
        return 0;
      }
      if (sub === 'list') {
        print((await store.keys.list({ accountId: v.account as string | undefined, limit: 1000, offset: 0 })).map(keyJson), json);
        return 0;
      }
      if (sub === 'disable' || sub === 'delete') {
        if (!hash || !/^[0-9a-f]{64}$/.test(hash)) return fail(`keys ${sub} needs the key's hash (64 hex characters)`);
        const ok = sub === 'disable' ? Boolean(await store.keys.update(hash, { disabled: true })) : await store.keys.delete(hash);
        if (!ok) return fail('no key with that hash');
        print([{ hash, [sub === 'disable' ? 'disabled' : 'deleted']: true }], json);
        return 0;
      }
      return fail('usage: gateway keys create|list|disable|delete');
    }),
};
