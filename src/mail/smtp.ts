import type { Transporter } from 'nodemailer';

/** Where a plugin sends its e-mail (budget notices, leaked-key notices). */
export interface SmtpSettings {
  host: string;
  port: number;
  secure: boolean;
  from: string;
  user?: string;
  pass?: string;
}

/**
 * The shared slot of a plugin's SMTP settings (the oauth plugin's `leaks.smtp`), for a plugin that sends mail and has
 * none of its own (the limits plugin's budget notices).
 */
export const MAIL_SMTP = 'mail.smtp';

/** The JSON schema of SmtpSettings in a plugin's config. */
export const smtpSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['host', 'port', 'from'],
  properties: {
    host: { type: 'string' },
    port: { type: 'integer' },
    secure: { type: 'boolean', default: false },
    from: { type: 'string' },
    user: { type: 'string' },
    pass: { type: 'string' },
  },
};

/** A nodemailer transport for the settings, or none without them (nodemailer is loaded only when mail is sent). */
export function smtpTransport(smtp: SmtpSettings | undefined): Transporter | undefined {
  return smtp
    ? (require('nodemailer') as typeof import('nodemailer')).createTransport({
        host: smtp.host,
        port: smtp.port,
        secure: smtp.secure,
        ignoreTLS: !smtp.secure,
        ...(smtp.user ? { auth: { user: smtp.user, pass: smtp.pass ?? '' } } : {}),
      })
    : undefined;
}
