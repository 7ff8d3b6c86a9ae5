import { SecretBox } from 'src/common/crypto/secret-box';
import { EntityManager } from 'typeorm';

/** A target's state for the log: `data` is stored; `secrets` are only compared, never stored. */
export interface AuditSnapshot {
  data: Record<string, unknown>;
  secrets: Record<string, string>;
}

type Params = Record<string, string>;
type Reader = (db: EntityManager, id: string, secrets: SecretBox) => Promise<AuditSnapshot | null>;

export interface AuditTarget {
  type: string;
  id: (params: Params) => string | null;
  /** Absent: the route changes nothing that has a state to show (a test call, codes shown once). */
  read?: Reader;
}

const one = async (db: EntityManager, sql: string, params: unknown[]) =>
  ((await db.query<Record<string, unknown>[]>(sql, params))[0] ?? null) as Record<string, unknown> | null;
// Interceptors run before the pipes that check path ids: an id the route will refuse has no row to read.
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const plain = (data: Record<string, unknown> | null): AuditSnapshot | null => (data ? { data, secrets: {} } : null);

// Each reader names its columns: a column added later (maybe a secret) stays out until someone adds it here.
const readChannel: Reader = async (db, id, secrets) => {
  const row = await one(
    db,
    `SELECT id, type, base_url, api_key_sealed, priority, weight, enabled, connect_timeout_ms, first_byte_timeout_ms,
       stream_first_byte_timeout_ms, silence_timeout_ms, auto_disable_after_hours
     FROM channels WHERE id = $1`,
    [id],
  );
  if (!row) {
    return null;
  }
  const { api_key_sealed: sealed, ...data } = row;
  return { data, secrets: { apiKey: openOrSealed(secrets, sealed as string) } };
};

const readModel: Reader = async (db, id) => {
  const model = await one(
    db,
    `SELECT id, input_price, output_price, cached_input_price, cache_write_input_price, max_output_tokens, vision,
       kind, rpm, tpm, enabled FROM models WHERE id = $1`,
    [id],
  );
  if (!model) {
    return null;
  }
  const routes = await db.query<unknown[]>(
    `SELECT channel_id, upstream_model, cost_input_price, cost_output_price, cost_cached_input_price,
       cost_cache_write_input_price FROM model_routes WHERE model_id = $1 ORDER BY position`,
    [id],
  );
  return { data: { ...model, routes }, secrets: {} };
};

const readAccount: Reader = async (db, id) =>
  !UUID.test(id)
    ? null
    : plain(
        await one(
          db,
          'SELECT id, email, balance, balance_version, suspended_at, suspension_reason, group_id FROM accounts WHERE id = $1',
          [id],
        ),
      );

const readRateLimit: Reader = async (db, id) => {
  const [accountId, modelId] = splitPair(id);
  if (!UUID.test(accountId)) {
    return null;
  }
  return plain(
    await one(
      db,
      'SELECT account_id, model_id, rpm, tpm, end_user_rpm, end_user_tpm FROM account_rate_limits WHERE account_id = $1 AND model_id = $2',
      [accountId, modelId],
    ),
  );
};

const readPaymentSettings: Reader = async (db) =>
  plain(await one(db, 'SELECT cny_per_usd, min_topup_usd, max_topup_usd, order_ttl_minutes FROM payment_settings', []));

const readTopup: Reader = async (db, id) =>
  !UUID.test(id)
    ? null
    : plain(
        await one(
          db,
          `SELECT id, account_id, status, currency, method, network, amount, credit, confirmed_via, paid_at, closed_at
       FROM topup_orders WHERE id = $1`,
          [id],
        ),
      );

const readGroup: Reader = async (db, id) =>
  plain(await one(db, 'SELECT id, description, price_multiplier, rpm, tpm FROM account_groups WHERE id = $1', [id]));

/** Every model's prices: a price book changes many at once, so its entry shows them all before and after. */
const readPrices: Reader = async (db) => ({
  data: {
    models: await db.query<unknown[]>(
      'SELECT id, input_price, output_price, cached_input_price, cache_write_input_price FROM models ORDER BY id',
    ),
  },
  secrets: {},
});

// Never key_hash: the log shows whose key and its state, not what would find the key.
const readApiKey: Reader = async (db, id) =>
  !UUID.test(id)
    ? null
    : plain(
        await one(db, 'SELECT id, account_id, name, key_prefix, status, disabled_by FROM api_keys WHERE id = $1', [id]),
      );

// Never code_hash: the prefix and the state only.
const readRedemptionCode: Reader = async (db, id) =>
  !UUID.test(id)
    ? null
    : plain(
        await one(
          db,
          `SELECT id, batch_id, code_prefix, amount, expires_at, redeemed_at, redeemed_by, voided_at
           FROM redemption_codes WHERE id = $1`,
          [id],
        ),
      );

const readRedemptionBatch: Reader = async (db, id) => {
  if (!UUID.test(id)) {
    return null;
  }
  const counts = await one(
    db,
    `SELECT COUNT(*)::int AS codes, COUNT(redeemed_at)::int AS redeemed, COUNT(voided_at)::int AS voided
     FROM redemption_codes WHERE batch_id = $1`,
    [id],
  );
  return counts && counts.codes !== 0 ? plain({ batch_id: id, ...counts }) : null;
};

/** The pair separator of composite ids; it cannot occur in an account id (a UUID). */
const PAIR = '/';
const splitPair = (id: string) => [id.slice(0, id.indexOf(PAIR)), id.slice(id.indexOf(PAIR) + 1)];

/**
 * What each admin change targets, by the route's method and pattern. A test checks that every
 * non-GET admin route is here, so a new one cannot go unaudited by accident.
 */
export const AUDIT_TARGETS: Record<string, AuditTarget> = {
  'PUT /admin/channels/:channelId': { type: 'channel', id: (p) => p.channelId, read: readChannel },
  'DELETE /admin/channels/:channelId': { type: 'channel', id: (p) => p.channelId, read: readChannel },
  'POST /admin/channels/:channelId/test': { type: 'channel', id: (p) => p.channelId },
  'PUT /admin/models/:modelId': { type: 'model', id: (p) => p.modelId, read: readModel },
  'DELETE /admin/models/:modelId': { type: 'model', id: (p) => p.modelId, read: readModel },
  'POST /admin/accounts/:accountId/adjustments': { type: 'account', id: (p) => p.accountId, read: readAccount },
  'POST /admin/accounts/:accountId/suspend': { type: 'account', id: (p) => p.accountId, read: readAccount },
  'POST /admin/accounts/:accountId/unsuspend': { type: 'account', id: (p) => p.accountId, read: readAccount },
  'PUT /admin/accounts/:accountId/group': { type: 'account', id: (p) => p.accountId, read: readAccount },
  'PUT /admin/groups/:groupId': { type: 'account_group', id: (p) => p.groupId, read: readGroup },
  'DELETE /admin/groups/:groupId': { type: 'account_group', id: (p) => p.groupId, read: readGroup },
  'PUT /admin/accounts/:accountId/rate-limits/:modelId': {
    type: 'rate_limit',
    id: (p) => `${p.accountId}${PAIR}${p.modelId}`,
    read: readRateLimit,
  },
  'DELETE /admin/accounts/:accountId/rate-limits/:modelId': {
    type: 'rate_limit',
    id: (p) => `${p.accountId}${PAIR}${p.modelId}`,
    read: readRateLimit,
  },
  'PUT /admin/payments/settings': { type: 'payment_settings', id: () => null, read: readPaymentSettings },
  'POST /admin/topups/:topupId/recheck': { type: 'topup', id: (p) => p.topupId, read: readTopup },
  // The codes are secrets shown once: the log says that a batch was made, never the codes.
  'POST /admin/redemption-codes': { type: 'redemption_codes', id: () => null },
  'POST /admin/price-books': { type: 'price_book', id: () => null, read: readPrices },

  'POST /admin/redemption-codes/:codeId/void': {
    type: 'redemption_code',
    id: (p) => p.codeId,
    read: readRedemptionCode,
  },
  'POST /admin/redemption-codes/batches/:batchId/void': {
    type: 'redemption_batch',
    id: (p) => p.batchId,
    read: readRedemptionBatch,
  },
  'POST /admin/keys/:keyId/disable': { type: 'api_key', id: (p) => p.keyId, read: readApiKey },
  'POST /admin/keys/:keyId/enable': { type: 'api_key', id: (p) => p.keyId, read: readApiKey },
  'DELETE /admin/keys/:keyId': { type: 'api_key', id: (p) => p.keyId, read: readApiKey },
};

/** A route nobody listed is still logged, by its path, with no state. */
export function auditTargetOf(method: string, route: string): AuditTarget {
  return AUDIT_TARGETS[`${method} ${route}`] ?? { type: 'unlisted', id: () => null };
}

/** The key in clear for comparing in memory; if it cannot be opened, the sealed form compares as well. */
function openOrSealed(secrets: SecretBox, sealed: string): string {
  try {
    return secrets.open(sealed);
  } catch {
    return sealed;
  }
}
