import { createHmac, createVerify } from 'node:crypto';
import type { Logger } from 'pino';
import type { Transporter } from 'nodemailer';
import {
  checkKey,
  constantTimeEqual,
  errors,
  hashKey,
  smtpTransport,
  type SmtpSettings,
  type Store,
} from '../../src/plugin';

export interface LeakConfig {
  /** ECDSA (P-256, SHA-256) public keys of secret-scanning partners, by key identifier. */
  public_keys: Array<{ key_identifier: string; pem: string }>;
  /** Shared secret for the HMAC-SHA256 alternative (X-Signature-256: sha256=<hex>). */
  hmac_secret?: string;
  smtp?: SmtpSettings;
  /** How far a signed report's X-Signature-Timestamp may be from the gateway's clock, seconds. */
  replay_window_s: number;
}

export interface LeakReport {
  token: string;
  type?: string;
  url?: string;
  source?: string;
}

/** The partner's JSON: an array of {token, type, url, source}. */
export function parseReports(raw: Buffer): LeakReport[] {
  let reports: unknown;
  try {
    reports = JSON.parse(raw.toString('utf8'));
  } catch (e) {
    throw errors.invalidJson((e as Error).message);
  }
  if (
    !Array.isArray(reports) ||
    !reports.every((r) => r && typeof r === 'object' && typeof (r as LeakReport).token === 'string')
  ) {
    throw errors.invalidRequest('The body must be an array of {token, type, url, source}', null, 'invalid_body');
  }
  return reports as LeakReport[];
}

/**
 * Is the raw body signed by a configured partner? GitHub's shape: `Github-Public-Key-Identifier`
 * and `Github-Public-Key-Signature` (base64 ECDSA over the raw body); or an HMAC-SHA256
 * of the raw body with the shared secret in `X-Signature-256: sha256=<hex>` (of "<timestamp>.<body>"
 * when `X-Signature-Timestamp` is sent).
 */
export function signatureValid(
  raw: Buffer,
  headers: Record<string, string | string[] | undefined>,
  cfg: LeakConfig,
): boolean {
  const h = (n: string) => {
    const v = headers[n];
    return Array.isArray(v) ? v[0] : v;
  };
  const keyId = h('github-public-key-identifier');
  const sig = h('github-public-key-signature');
  if (keyId && sig) {
    const key = cfg.public_keys.find((k) => k.key_identifier === keyId);
    if (!key) return false;
    try {
      return createVerify('sha256').update(raw).verify(key.pem, Buffer.from(sig, 'base64'));
    } catch {
      return false;
    }
  }
  const hmac = h('x-signature-256');
  if (hmac && cfg.hmac_secret) {
    // With X-Signature-Timestamp the timestamp is signed too ("<timestamp>.<body>"), so it cannot be changed to pass
    // the window.
    const ts = h('x-signature-timestamp');
    const mac = createHmac('sha256', cfg.hmac_secret);
    if (ts !== undefined) mac.update(`${ts}.`);
    return constantTimeEqual(hmac, `sha256=${mac.update(raw).digest('hex')}`);
  }
  return false;
}

export class LeakHandler {
  private readonly mailer: Transporter | undefined;

  constructor(
    private readonly store: Store,
    private readonly cfg: LeakConfig,
    private readonly logger: Logger,
    /** Drops a key (and the keys made from it) from the auth cache at once (the auth plugin's FORGET_KEY). */
    private readonly forget: (hash: string) => void = () => undefined,
  ) {
    this.mailer = smtpTransport(cfg.smtp);
  }

  /** Disable every live key of ours among the reports, record where it was found, tell its owner. */
  async handle(
    reports: LeakReport[],
  ): Promise<Array<{ token_raw: string; token_type: string; label: 'true_positive' | 'false_positive' }>> {
    const out: Array<{ token_raw: string; token_type: string; label: 'true_positive' | 'false_positive' }> = [];
    for (const r of reports) {
      const live = checkKey(r.token) === 'ok' ? await this.store.keys.get(hashKey(r.token)) : undefined;
      if (!live) {
        out.push({ token_raw: r.token, token_type: r.type ?? 'gateway_api_key', label: 'false_positive' });
        continue;
      }
      await this.store.keys.markLeaked(live.hash, r.url ?? r.source ?? 'unknown');
      this.forget(live.hash);
      const account = await this.store.accounts.get(live.accountId);
      if (account?.email && this.mailer && this.cfg.smtp) {
        await this.mailer
          .sendMail({
            from: this.cfg.smtp.from,
            to: account.email,
            subject: `Your API key ${live.label} was found in public and has been disabled`,
            text:
              `The API key "${live.name}" (${live.label}) of account "${account.name}" ` +
              `was found at ${r.url ?? 'an unknown location'} ` +
              `(reported by ${r.source ?? 'a secret-scanning partner'}).\n\n` +
              'We disabled it. Delete it in your key settings and create a new one; ' +
              'keep keys in environment variables, never in repositories.\n',
          })
          .catch((e: unknown) => this.logger.error({ err: e, key: live.label }, 'leak notice e-mail failed'));
      }
      this.logger.warn({ key: live.label, account: live.accountId, url: r.url }, 'leaked key disabled');
      out.push({ token_raw: r.token, token_type: r.type ?? 'gateway_api_key', label: 'true_positive' });
    }
    return out;
  }

  close(): void {
    this.mailer?.close();
  }
}
