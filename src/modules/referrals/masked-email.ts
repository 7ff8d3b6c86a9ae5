/**
 * An invitee's address as its referrer sees it: the first character of the local part and the
 * domain (`a***@example.com`). Enough to recognise a friend, not to write to a stranger.
 */
export function maskedEmail(email: string): string {
  const at = email.lastIndexOf('@');
  if (at <= 0) {
    return '***';
  }
  return `${email[0]}***${email.slice(at)}`;
}
