import { accountJson } from '../api/admin';
import { toNano } from '../store/money';
import type { CliCommand } from './commands';
import { fail, print, withStore } from './store-cli';
import { runLimits } from './limits';

export const accountsCommand: CliCommand = {
  name: 'accounts',
  usage: 'accounts create|list|limits',
  summary: 'accounts create --name N [--email E] [--credits C]; accounts list; accounts limits ID [--models ...] [--rpm N] [--tpm N] [--concurrency N] [--plan P]  (--json, --config)',
  run: (args) =>
    args[0] === 'limits' ? runLimits('account', args.slice(1)) :
    withStore(args, { name: { type: 'string' }, email: { type: 'string' }, credits: { type: 'string' } }, async (store, v, [sub]) => {
      const json = v.json === true;
      if (sub === 'create') {
        if (typeof v.name !== 'string' || !v.name) return fail('accounts create needs --name');
        const credits = Number(v.credits ?? 0);
        if (!Number.isFinite(credits) || credits < 0) return fail('--credits must be a number >= 0');
        print([accountJson(await store.accounts.create({ name: v.name, email: (v.email as string | undefined) ?? null, credits: toNano(credits) }))], json);
        return 0;
      }
      if (sub === 'list') {
        print((await store.accounts.list(1000, 0)).map(accountJson), json);
        return 0;
      }
      return fail('usage: gateway accounts create|list');
    }),
};
