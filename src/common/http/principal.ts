import { FastifyRequest } from 'fastify';
import { AdminRole } from 'src/config/admin-tokens';

/** Who a request authenticated as: read by the guard, the decorators and the admin audit alike. */
export enum AuthKind {
  Public = 'public',
  ApiKey = 'api-key',
  Console = 'console',
  Admin = 'admin',
}

/** What the account's group changes for its requests; read with the key and cached with it. */
export interface GroupTerms {
  /** The price multiplier in millionths (1_000_000n is 1×), applied in the hold and the charge. */
  priceMultiplierPpm: bigint;
  /** Requests and tokens per minute replacing the models' defaults; null: the model's own. */
  rpm: number | null;
  tpm: number | null;
}

export interface ApiKeyPrincipal {
  kind: AuthKind.ApiKey;
  accountId: string;
  keyId: string;
  /** The only models the key may use; null: every model. */
  allowedModels: ReadonlySet<string> | null;
  /** Nano-dollars the key may spend over its life (checked in the admission hold); null: no limit. */
  spendLimit: bigint | null;
  group: GroupTerms;
}
export interface ConsolePrincipal {
  kind: AuthKind.Console;
  accountId: string;
  /** The console session the access token belongs to (live when the guard let the request in). */
  sessionId: string;
}
export interface AdminPrincipal {
  kind: AuthKind.Admin;
  /** The name of the token presented (ADMIN_TOKENS; ADMIN_TOKEN is `default`): the actor of the audit log. */
  name: string;
  /** What the token may do (ADMIN_TOKENS; ADMIN_TOKEN is `admin`): checked against each route's `@Permission`. */
  role: AdminRole;
}
export type Principal = ApiKeyPrincipal | ConsolePrincipal | AdminPrincipal;

export type AuthenticatedRequest = FastifyRequest & { principal?: Principal };
