import { formatUsd } from 'src/common/money/money';

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
}

/** How long a mailed link works. */
export const VERIFY_EMAIL_TTL_MS = 48 * 60 * 60_000;
export const PASSWORD_RESET_TTL_MS = 30 * 60_000;

/** A console page that takes the token from its query and posts it to the API. */
export function consoleLink(consoleUrl: string, page: 'verify-email' | 'reset-password', token: string): string {
  return `${consoleUrl}/${page}?token=${encodeURIComponent(token)}`;
}

export function verificationMail(to: string, link: string): MailMessage {
  return {
    to,
    subject: 'Confirm your e-mail address',
    text: [
      'Confirm the e-mail address of your account by opening this link:',
      '',
      link,
      '',
      'The link works once, for 48 hours. Until the address is confirmed, the account cannot create API keys or top up.',
      'If you did not create an account, ignore this mail.',
    ].join('\n'),
  };
}

export function passwordResetMail(to: string, link: string): MailMessage {
  return {
    to,
    subject: 'Reset your password',
    text: [
      'Someone (we hope you) asked to reset the password of your account. Choose a new one here:',
      '',
      link,
      '',
      'The link works once, for 30 minutes. Setting a new password signs out every session.',
      'If you did not ask, ignore this mail: your password stays as it is.',
    ].join('\n'),
  };
}

export function lowBalanceMail(to: string, balance: bigint, threshold: bigint, consoleUrl: string): MailMessage {
  return {
    to,
    subject: `Your balance is below $${formatUsd(threshold)}`,
    text: [
      `Your prepaid balance is $${formatUsd(balance)}, below the $${formatUsd(threshold)} you set for this alert.`,
      'Requests are refused once the balance cannot cover them. Top up in the console:',
      '',
      consoleUrl,
      '',
      'This alert is sent once; it is armed again when the balance is back at or above the threshold.',
    ].join('\n'),
  };
}
