import { keyJson } from '../api/admin-wire';
import { issueKey } from '../auth/issue-key';
import type { LimitReset } from '../store/keys';
import { MAX_CREDITS_TEXT, nanoOrNull } from '../store/money';
import type { CliCommand } from './command';
import { findAccount } from './account-ref';
import { findKey } from './key-ref';
import { auditCli, fail, print, withStore } from './store-cli';
import { runScan } from './scan';

const RESETS = ['daily', 'weekly', 'monthly'];

export const keysCommand: CliCommand = {
  name: 'keys',
  usage: 'keys create|list|disable|delete|scan',
  summary: 'manage API keys and their limits',
  help: [
    'keys create --account ACCOUNT --name N [--limit C] [--reset daily|weekly|monthly]',
    '                                  a new key for ACCOUNT (id or unique name), printed once;',
    '                                  --limit: credits per reset period (or for ever)',
    'keys list [--account ACCOUNT]     keys with their limits and usage (never the keys)',
    'keys disable|delete KEY           KEY: its hash (or its first 6+ characters), name or label',
    'keys scan [PATH]                  find gateway keys committed in files (exit 1 if any)',
  ],
  run: async (args) =>
    args[0] === 'scan'
      ? runScan(args.slice(1))
      : withStore(
          args,
          {
            account: { type: 'string' },
            name: { type: 'string' },
            limit: { type: 'string' },
            reset: { type: 'string' },
          },
          async (store, v, [sub, ref]) => {
            const json = v.json === true;
            if (sub === 'create') {
              if (typeof v.account !== 'string' || typeof v.name !== 'string')
                return fail('keys create needs --account (id or name) and --name');
              const account = await findAccount(store, v.account);
              if (typeof account === 'string') return fail(account);
              const limit = v.limit === undefined ? null : nanoOrNull(Number(v.limit));
              if (v.limit !== undefined && limit === null)
                return fail(`--limit must be a number of credits from 0 to ${MAX_CREDITS_TEXT}`);
              if (v.reset !== undefined && !RESETS.includes(v.reset as string))
                return fail('--reset must be daily, weekly or monthly');
              const { raw, key: k } = await issueKey(store.keys, {
                accountId: account.id,
                name: v.name,
                limit,
                limitReset: (v.reset as LimitReset | undefined) ?? null,
              });
              await auditCli(store, { action: 'key.create', target: k.hash, after: keyJson(k) });
              // The only time the key is shown: the warning goes to stderr so that --json output stays parseable.
              process.stderr.write(`The key below is shown once: store it now (the gateway keeps only its hash).\n`);
              if (json) print([{ key: raw, ...keyJson(k) }], true);
              else
                process.stdout.write(
                  `\n  ${raw}\n\n  name ${k.name}   account ${account.name} (${account.id})   hash ${k.hash}\n`,
                );
              return 0;
            }
            if (sub === 'list') {
              let accountId: string | undefined;
              if (typeof v.account === 'string') {
                const a = await findAccount(store, v.account);
                if (typeof a === 'string') return fail(a);
                accountId = a.id;
              }
              print((await store.keys.list({ accountId, limit: 1000, offset: 0 })).map(keyJson), json);
              return 0;
            }
            if (sub === 'disable' || sub === 'delete') {
              if (!ref) return fail(`keys ${sub} needs the key: its hash, the start of it, its name or its label`);
              const before = await findKey(store, ref);
              if (typeof before === 'string') return fail(before);
              const { hash } = before;
              const after = sub === 'disable' ? await store.keys.update(hash, { disabled: true }) : undefined;
              const ok = sub === 'disable' ? Boolean(after) : await store.keys.delete(hash);
              if (!ok) return fail('no key with that hash');
              await auditCli(store, {
                action: `key.${sub}`,
                target: hash,
                before: keyJson(before),
                ...(after ? { after: keyJson(after) } : {}),
              });
              print([{ hash, [sub === 'disable' ? 'disabled' : 'deleted']: true }], json);
              return 0;
            }
            return fail('usage: gateway keys create|list|disable|delete|scan (see gateway help)');
          },
        ),
};
