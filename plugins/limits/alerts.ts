import type { Transporter } from 'nodemailer';
import type { Logger } from 'pino';
import { currentWindowUsage, fromNano, smtpTransport, toNano, windowStart, type Store } from '../../src/plugin';
import type { ApiKey, Account } from '../../src/plugin';
import type { BudgetAlertSettings, LimitSettingsRepo } from './store/repo';
import type { LimitsConfig, SmtpSettings } from './schema';
import { deliverWebhook } from './webhook';

const RECHECK_MS = 250;

interface Notice {
  subject: string;
  threshold: string;
  windowId: string;
  email: string | null;
  title: string;
  text: string;
  event: Record<string, unknown>;
}

/**
 * Budget notices: after a request, a key's credit use against its limit (in the limit's
 * window) and its account's balance are compared with the thresholds (the key's or account's own, set through the
 * admin API or the console, else the configured ones: `thresholds`); each
 * threshold crossed sends one notice per window (claimed in the store, so one replica
 * sends it), by e-mail to the account and by signed webhook. Never on a request's path:
 * `poke` schedules a check and returns; checks of one key run one at a time, at most every RECHECK_MS.
 */
export class BudgetAlerts {
  /** The mail transport and its settings, made when the first notice goes out (undefined: not yet; null: no SMTP). */
  private mail: { transport: Transporter; smtp: SmtpSettings } | null | undefined;
  private readonly pending = new Map<string, { again: boolean }>();
  private readonly inflight = new Set<Promise<unknown>>();

  constructor(
    private readonly store: Store,
    private readonly repo: LimitSettingsRepo,
    private readonly cfg: LimitsConfig['alerts'],
    /** Where e-mail goes out: asked once, when the first notice is sent (another plugin may offer the settings). */
    private readonly smtp: () => SmtpSettings | undefined,
    private readonly logger: Logger,
  ) {}

  /** The mail transport, made once (nodemailer is loaded only when budget notices go by e-mail). */
  private mailer(): { transport: Transporter; smtp: SmtpSettings } | null {
    if (this.mail === undefined) {
      const smtp = this.smtp();
      const transport = smtpTransport(smtp);
      this.mail = smtp && transport ? { transport, smtp } : null;
    }
    return this.mail;
  }

  get enabled(): boolean {
    return this.cfg.key_limit_percent.length > 0 || this.cfg.account_balance_below.length > 0;
  }

  /** Check the key after its request; `own`: the key or its account has thresholds of its own (governance says). */
  poke(keyHash: string, own = false): void {
    if (!this.enabled && !own) return;
    const p = this.pending.get(keyHash);
    if (p) {
      p.again = true;
      return;
    }
    const state = { again: false };
    this.pending.set(keyHash, state);
    const run = (async () => {
      // Let the request's settlement (credit) land first.
      await new Promise((r) => setTimeout(r, 20));
      for (;;) {
        state.again = false;
        await this.check(keyHash).catch((e: unknown) => this.logger.error({ err: e }, 'limits: budget check failed'));
        if (!state.again) break;
        // A busy key is checked at most every RECHECK_MS, not once per request.
        await new Promise((r) => setTimeout(r, RECHECK_MS));
      }
      this.pending.delete(keyHash);
    })();
    this.inflight.add(run);
    void run.finally(() => this.inflight.delete(run));
  }

  private async check(keyHash: string): Promise<void> {
    const key = await this.store.keys.get(keyHash);
    if (!key) return;
    const [account, keyOwn, accountOwn] = await Promise.all([
      this.store.accounts.get(key.accountId),
      this.repo.get('key', key.hash),
      this.repo.get('account', key.accountId),
    ]);
    const t = thresholds(this.cfg, keyOwn?.budgetAlerts ?? null, accountOwn?.budgetAlerts ?? null);
    const now = Date.now();
    const notices = [...keyNotices(key, account, t.keyPercent, now), ...accountNotices(account, t.balanceBelow, now)];
    for (const n of notices) if (await this.repo.claimNotice(n.subject, n.threshold, n.windowId)) this.send(n);
  }

  private send(n: Notice): void {
    this.logger.info(
      { subject: n.subject.startsWith('key:') ? 'key' : 'account', threshold: n.threshold },
      'limits: budget notice',
    );
    const jobs: Array<Promise<unknown>> = [];
    const mail = n.email ? this.mailer() : null;
    if (mail && n.email) {
      jobs.push(
        mail.transport
          .sendMail({ from: mail.smtp.from, to: n.email, subject: n.title, text: n.text })
          .catch((e: unknown) => this.logger.error({ err: e }, 'limits: budget e-mail failed')),
      );
    }
    if (this.cfg.webhook) jobs.push(deliverWebhook(this.cfg.webhook, n.event, this.logger));
    const all = Promise.all(jobs);
    this.inflight.add(all);
    void all.finally(() => this.inflight.delete(all));
  }

  /** Wait for notices under way (bounded), then close the mailer. */
  async close(): Promise<void> {
    await Promise.race([Promise.allSettled([...this.inflight]), new Promise((r) => setTimeout(r, 2000).unref())]);
    this.mail?.transport.close();
  }
}

/**
 * The thresholds that hold for a key: its own percent, else its account's, else the configured; its account's own
 * balance thresholds, else the configured. An empty list of its own turns that notice off for the subject.
 */
export function thresholds(
  cfg: LimitsConfig['alerts'],
  key: BudgetAlertSettings | null,
  account: BudgetAlertSettings | null,
): { keyPercent: number[]; balanceBelow: number[] } {
  return {
    keyPercent: key?.key_limit_percent ?? account?.key_limit_percent ?? cfg.key_limit_percent,
    balanceBelow: account?.account_balance_below ?? cfg.account_balance_below,
  };
}

/** A notice per percent of the key's credit limit its use in the limit's window has reached. */
function keyNotices(key: ApiKey, account: Account | undefined, percents: number[], now: number): Notice[] {
  if (key.limit === null || key.limit <= 0) return [];
  const limit = key.limit;
  const used = currentWindowUsage(key, now);
  const windowId = String(windowStart(key.limitReset, now));
  return percents
    .filter((pct) => used * 100 >= limit * pct)
    .map((pct) => ({
      subject: `key:${key.hash}`,
      threshold: `${pct}%`,
      windowId,
      email: account?.email ?? null,
      title: `API key ${key.label} has used ${pct}% of its credit limit`,
      text:
        `The API key "${key.name}" (${key.label}) has used ${fromNano(used)} ` +
        `of its ${fromNano(limit)} credit limit (${key.limitReset ?? 'lifetime'} window; threshold ${pct}%).\n`,
      event: {
        type: 'budget.key_limit',
        key: { hash: key.hash, label: key.label, name: key.name, account_id: key.accountId },
        threshold_percent: pct,
        usage: fromNano(used),
        limit: fromNano(limit),
        limit_reset: key.limitReset,
        window_start: new Date(Number(windowId)).toISOString(),
        at: new Date(now).toISOString(),
      },
    }));
}

/** A notice per balance threshold the account is below; its window lasts until credit is added (a top-up re-arms). */
function accountNotices(account: Account | undefined, below: number[], now: number): Notice[] {
  if (!account) return [];
  const balance = account.credits - account.usage - account.reserved;
  return below
    .filter((b) => balance < toNano(b))
    .map((b) => ({
      subject: `account:${account.id}`,
      threshold: `below:${b}`,
      windowId: String(account.credits),
      email: account.email,
      title: `Account ${account.name} balance is below ${b} credits`,
      text: `The balance of account "${account.name}" is ${fromNano(balance)} credits, below ${b}.\n`,
      event: {
        type: 'budget.account_balance',
        account: { id: account.id, name: account.name },
        below: b,
        balance: fromNano(balance),
        at: new Date(now).toISOString(),
      },
    }));
}
