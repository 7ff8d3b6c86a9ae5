import { accountSlot } from 'src/common/redis/key-slots';

// The windows of one account's requests, in the account's slot (key-slots.ts) beside its balance
// and holds: one script counts a request in all its windows, and an admission's counts and hold
// are all one slot.

/** Requests per minute: `gw:{id}:rl:<model>`, and `…:u:<end user>` for an end user's window. */
export function requestWindowKey(accountId: string, modelId: string, endUser?: string): string {
  const key = `${accountSlot(accountId)}:rl:${modelId}`;
  return endUser === undefined ? key : `${key}:u:${endUser}`;
}

/** Tokens per minute in the minute-aligned `window`: `gw:{id}:tpm:<model>[:u:<end user>]:<window>`. */
export function tokenWindowKey(accountId: string, modelId: string, window: number, endUser?: string): string {
  const scope = endUser === undefined ? modelId : `${modelId}:u:${endUser}`;
  return `${accountSlot(accountId)}:tpm:${scope}:${window}`;
}

/** Token counts per minute of one key on one model (POST /v1/messages/count_tokens): `gw:{id}:rlc:<key>:<model>`. */
export function countWindowKey(accountId: string, keyId: string, modelId: string): string {
  return `${accountSlot(accountId)}:rlc:${keyId}:${modelId}`;
}
