/**
 * When an invitee's referral took effect, as SQL over the accounts row `alias`: its e-mail verification
 * or its first paid top-up (a wallet, USDT, a redemption code), whichever came first; NULL before both
 * (Postgres's LEAST skips NULLs). Without mail nobody verifies, so the top-up is the signal. Spending
 * before it pays the referrer nothing: a throwaway address that pays nothing earns no rebate.
 */
export function referralEffectiveAt(alias: string): string {
  return `LEAST(${alias}.email_verified_at, ${alias}.first_paid_topup_at)`;
}
