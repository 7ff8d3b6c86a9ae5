import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import { createTransport, Transporter } from 'nodemailer';
import { APP_CONFIG, AppConfig } from 'src/config/app-config';
import { MailMessage } from 'src/modules/mail/mail-messages';

/** Bounds on one SMTP conversation: a server that hangs fails the try, and the job's backoff retries it. */
const CONNECTION_TIMEOUT_MS = 10_000;
const GREETING_TIMEOUT_MS = 10_000;
const SOCKET_TIMEOUT_MS = 30_000;

/** nodemailer over SMTP_URL; null without one. */
@Injectable()
export class MailTransport implements OnModuleDestroy {
  private readonly transporter: Transporter | null;

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {
    const { smtpUrl } = config.mail;
    this.transporter = smtpUrl
      ? createTransport({
          url: smtpUrl,
          connectionTimeout: CONNECTION_TIMEOUT_MS,
          greetingTimeout: GREETING_TIMEOUT_MS,
          socketTimeout: SOCKET_TIMEOUT_MS,
        })
      : null;
  }

  get enabled(): boolean {
    return this.transporter !== null;
  }

  async send(message: MailMessage): Promise<void> {
    if (!this.transporter) {
      throw new Error('mail is disabled: no SMTP_URL');
    }
    await this.transporter.sendMail({ from: this.config.mail.from, ...message });
  }

  onModuleDestroy(): void {
    this.transporter?.close();
  }
}
