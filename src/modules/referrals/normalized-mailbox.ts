/** Google delivers mail for these domains to one mailbox, ignoring dots in the local part. */
const GMAIL_DOMAINS = new Set(['gmail.com', 'googlemail.com']);

/**
 * The mailbox an address delivers to, so that one person's spellings of it compare equal: case
 * ignored, a `+tag` dropped, and at Gmail the dots dropped and googlemail.com read as gmail.com.
 * Only for comparing: the account keeps the address as registered.
 */
export function normalizedMailbox(email: string): string {
  const address = email.trim().toLowerCase();
  const at = address.lastIndexOf('@');
  if (at <= 0) {
    return address;
  }
  let local = address.slice(0, at).split('+')[0];
  let domain = address.slice(at + 1);
  if (GMAIL_DOMAINS.has(domain)) {
    local = local.replace(/\./g, '');
    domain = 'gmail.com';
  }
  return `${local}@${domain}`;
}

/** True when the invitee's address reaches the referrer's own mailbox: such a referral earns nothing. */
export function isOwnMailbox(inviteeEmail: string, referrerEmail: string): boolean {
  return normalizedMailbox(inviteeEmail) === normalizedMailbox(referrerEmail);
}
