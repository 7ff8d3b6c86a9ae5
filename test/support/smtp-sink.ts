import { SMTPServer } from 'smtp-server';
import { freePort } from 'test/support/free-port';

/** A mail as the sink received it: envelope recipients, the Subject header and the decoded text. */
export interface ReceivedMail {
  to: string[];
  subject: string;
  text: string;
}

/**
 * A real SMTP server (smtp-server) on a fixed local port, plain SMTP and any login accepted, that
 * keeps what it receives. It can be stopped and started again on the same port: an SMTP server
 * that is down, then back.
 */
export class SmtpSink {
  readonly received: ReceivedMail[] = [];
  private server: SMTPServer | null = null;

  private constructor(readonly port: number) {}

  /** `listening` false: the port is chosen (for SMTP_URL) but nothing answers yet. */
  static async create(listening = true): Promise<SmtpSink> {
    const sink = new SmtpSink(await freePort());
    if (listening) {
      await sink.start();
    }
    return sink;
  }

  get url(): string {
    return `smtp://tester:secret@127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    const server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      logger: false,
      onAuth: (_auth, _session, callback) => callback(null, { user: 'tester' }),
      onData: (stream, session, callback) => {
        const chunks: Buffer[] = [];
        stream.on('data', (chunk: Buffer) => chunks.push(chunk));
        stream.on('end', () => {
          this.received.push(parseMail(Buffer.concat(chunks).toString('utf8'), session.envelope.rcptTo));
          callback();
        });
      },
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.server = server;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (server) {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  }

  /** The mails to `address` so far. */
  to(address: string): ReceivedMail[] {
    return this.received.filter((mail) => mail.to.includes(address.toLowerCase()));
  }

  /** Waits until `address` has received `count` mails (default: one more than none), and returns them. */
  async waitFor(address: string, count = 1, timeoutMs = 15_000): Promise<ReceivedMail[]> {
    const deadline = Date.now() + timeoutMs;
    while (this.to(address).length < count) {
      if (Date.now() > deadline) {
        throw new Error(`${address} received ${this.to(address).length} mails, expected ${count}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return this.to(address);
  }
}

/** The token of the console link in a mail (…?token=…). */
export function tokenOf(mail: ReceivedMail): string {
  const match = /[?&]token=([A-Za-z0-9_%-]+)/.exec(mail.text);
  if (!match) {
    throw new Error(`no link with a token in the mail "${mail.subject}"`);
  }
  return decodeURIComponent(match[1]);
}

function parseMail(raw: string, rcptTo: { address: string }[]): ReceivedMail {
  const split = raw.indexOf('\r\n\r\n');
  const head = raw.slice(0, split).replace(/\r\n[ \t]+/g, ' ');
  const body = raw.slice(split + 4);
  const header = (name: string) => new RegExp(`^${name}: (.*)$`, 'im').exec(head)?.[1] ?? '';
  const encoding = header('Content-Transfer-Encoding').toLowerCase();
  const text =
    encoding === 'quoted-printable'
      ? Buffer.from(
          body
            .replace(/=\r\n/g, '')
            .replace(/=([0-9A-F]{2})/g, (_match, hex: string) => String.fromCharCode(parseInt(hex, 16))),
          'latin1',
        ).toString('utf8')
      : encoding === 'base64'
        ? Buffer.from(body, 'base64').toString('utf8')
        : body;
  return { to: rcptTo.map((rcpt) => rcpt.address.toLowerCase()), subject: header('Subject'), text };
}
