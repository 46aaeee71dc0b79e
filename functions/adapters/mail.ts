/**
 * Outbound mail (invitation links). Offline it is a local outbox, one JSON file per message, readable by the
 * owner only (docs/security.md names it); in AWS it is Amazon SES, sending from the one verified sender the
 * stack grants (lib/api.ts). Which one comes from the configuration, never from a request.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SESv2Client, SendEmailCommand } from '@aws-sdk/client-sesv2';
import { v7 as uuidv7 } from 'uuid';
import { adapterSlot } from '#platform/adapter-slot.ts';
import { nowIso } from '#platform/clock.ts';
import { config } from '#platform/config.ts';

export interface OutgoingMail {
  to: string;
  subject: string;
  text: string;
}

export interface Mailer {
  send(mail: OutgoingMail): Promise<void>;
}

export class MailNotConfiguredError extends Error {
  override name = 'MailNotConfiguredError';
}

/** Writes `<dir>/<uuidv7>.json` (time-ordered names), the directory 0700 and the file 0600. */
export function outboxMailer(dir: string): Mailer {
  return {
    async send(mail) {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      const file = join(dir, `${uuidv7()}.json`);
      writeFileSync(file, `${JSON.stringify({ ...mail, createdAt: nowIso() }, null, 2)}\n`, { mode: 0o600 });
    },
  };
}

/** SES (v2 SendEmail), plain text: the link is the message, nothing for a mail client to render. */
export function sesMailer(from: string, client = new SESv2Client({ region: config().region })): Mailer {
  return {
    async send(mail) {
      await client.send(
        new SendEmailCommand({
          FromEmailAddress: from,
          Destination: { ToAddresses: [mail.to] },
          Content: {
            Simple: {
              Subject: { Data: mail.subject, Charset: 'UTF-8' },
              Body: { Text: { Data: mail.text, Charset: 'UTF-8' } },
            },
          },
        }),
      );
    },
  };
}

/** The mailer this configuration names: MAIL_OUTBOX_DIR, else MAIL_FROM; without either, it fails with its reason. */
export function mailerFromConfig(): Mailer {
  const mail = config().mail;
  if (!mail)
    throw new MailNotConfiguredError('no mail transport: set MAIL_OUTBOX_DIR (offline) or MAIL_FROM (SES)');
  return mail.kind === 'outbox' ? outboxMailer(mail.dir) : sesMailer(mail.from);
}

/** The process's mailer (see platform/adapter-slot.ts): chosen at first use, then kept. */
export const mailer = adapterSlot(mailerFromConfig);
