import { accountJson } from '../api/admin-wire';
import { CreditsOutOfRange, fromNano, MAX_CREDITS_TEXT, nanoOrNull } from '../store/money';
import type { CliCommand } from './command';
import { findAccount } from './account-ref';
import { auditCli, fail, print, withStore } from './store-cli';

export const accountsCommand: CliCommand = {
  name: 'accounts',
  usage: 'accounts create|list|credits',
  summary: 'manage accounts, their credit and their limits',
  help: [
    'accounts create --name N [--email E] [--credits C]',
    '                                  a new account with C credits (default 0)',
    'accounts list                     every account with its credits and usage',
    'accounts credits add ACCOUNT AMOUNT',
    '                                  top up; a negative AMOUNT removes credit;',
    '                                  ACCOUNT is an id (acct_...) or a unique name',
  ],
  // A negative AMOUNT ("-5") would read as an option: it is passed through as a positional.
  run: (args) =>
    withStore(
      args.map((a) => (/^-\d/.test(a) ? `neg:${a}` : a)),
      { name: { type: 'string' }, email: { type: 'string' }, credits: { type: 'string' } },
      async (store, v, [sub, op, ref, amount]) => {
        const json = v.json === true;
        if (sub === 'create') {
          if (typeof v.name !== 'string' || !v.name) return fail('accounts create needs --name');
          const credits = nanoOrNull(Number(v.credits ?? 0));
          if (credits === null) return fail(`--credits must be a number from 0 to ${MAX_CREDITS_TEXT}`);
          const created = accountJson(
            await store.accounts.create({ name: v.name, email: (v.email as string | undefined) ?? null, credits }),
          );
          await auditCli(store, { action: 'account.create', target: created.id, after: created });
          print([created], json);
          return 0;
        }
        if (sub === 'list') {
          print((await store.accounts.list(1000, 0)).map(accountJson), json);
          return 0;
        }
        if (sub === 'credits') {
          if (op !== 'add' || !ref || amount === undefined)
            return fail('usage: gateway accounts credits add ACCOUNT AMOUNT');
          const n = nanoOrNull(Number(amount.replace(/^neg:/, '')), true);
          if (n === null)
            return fail(`AMOUNT must be a number of credits from -${MAX_CREDITS_TEXT} to ${MAX_CREDITS_TEXT}`);
          const account = await findAccount(store, ref);
          if (typeof account === 'string') return fail(account);
          try {
            const after = accountJson((await store.accounts.addCredits(account.id, n)) ?? account);
            await auditCli(store, {
              action: 'credits.add',
              target: account.id,
              before: { credits: accountJson(account).credits },
              after: { amount: fromNano(n), credits: after.credits },
            });
            print([after], json);
          } catch (e) {
            if (e instanceof CreditsOutOfRange) return fail(`AMOUNT: ${e.message}`);
            throw e;
          }
          return 0;
        }
        return fail('usage: gateway accounts create|list|credits (see gateway help)');
      },
    ),
};
