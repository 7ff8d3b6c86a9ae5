import { Inject, Injectable } from '@nestjs/common';
import { Logger } from 'pino';
import { SecretBox } from 'src/common/crypto/secret-box';
import { ApiError, ErrorKind } from 'src/common/errors/api-error';
import { LOGGER } from 'src/common/logging/logger';
import { metrics } from 'src/common/metrics/metrics';
import { APP_CONFIG, AppConfig } from 'src/config/app-config';
import { isRecord } from 'src/modules/relay/upstream/provider-adapter';
import { StoredResponsesRepository } from 'src/modules/responses/stored/stored-responses.repository';

type Json = Record<string, unknown>;

const DAY_MS = 86_400_000;

/** The fields of a kept answer besides its output: none of them is the request's content. */
const SUMMARY_FIELDS = ['created_at', 'status', 'incomplete_details', 'model', 'usage'] as const;

/**
 * What `/v1/responses` keeps of its answers when asked to (`store`, RESPONSES_STORE): the output
 * items and the usage, sealed with the deployment's secret, bound to the account, for
 * RESPONSES_ITEM_TTL_DAYS. Never the request's input. An `item_reference` in a later request is
 * replaced by the item it names; nothing is read for a request without one.
 */
@Injectable()
export class StoredResponses {
  /**
   * Keeps still being written by this process, by item id: a client quick enough to refer to an item
   * before its write landed waits for it instead of being refused.
   */
  private readonly pending = new Map<string, Promise<void>>();

  constructor(
    private readonly repository: StoredResponsesRepository,
    private readonly secrets: SecretBox,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  get enabled(): boolean {
    return this.config.responses.store;
  }

  get ttlDays(): number {
    return this.config.responses.itemTtlDays;
  }

  /**
   * Keeps an answer already sent. Not awaited by the request: a failure is logged (without the
   * content) and counted, and only later references to these items are refused.
   */
  keep(accountId: string, response: Json): Promise<void> {
    const output = Array.isArray(response.output) ? (response.output as unknown[]).filter(isRecord) : [];
    const kept = this.save(accountId, response, output)
      .catch((error: unknown) => {
        metrics.responsesKeepFailures.inc();
        this.logger.warn(
          { err: (error as Error).message, responseId: response.id },
          'a Responses answer could not be kept; references to its items will be refused',
        );
      })
      .finally(() => output.forEach((item) => this.pending.delete(String(item.id))));
    output.forEach((item) => this.pending.set(String(item.id), kept));
    return kept;
  }

  /**
   * `input` with each `item_reference` replaced by the account's kept item it names; unchanged (and
   * nothing read) when it has none. A reference to anything else is a 400 naming it.
   */
  async resolveReferences(accountId: string, input: unknown): Promise<unknown> {
    if (!this.enabled || !Array.isArray(input)) {
      return input;
    }
    const references = referencedIds(input);
    if (references.size === 0) {
      return input;
    }
    const ids = [...new Set(references.values())];
    await Promise.all(ids.flatMap((id) => this.pending.get(id) ?? []));
    const found = await this.repository.liveItems(accountId, ids);
    // Each item is opened once; a reference repeated costs its bytes again, and all of them together
    // may add no more than a body may carry, so a few bytes of references cannot grow into gigabytes.
    const texts = new Map(ids.map((id) => [id, this.openedText(found.get(id))]));
    const limit = this.config.bodyLimitBytes;
    let added = 0;
    return input.map((item: unknown, i) => {
      const id = references.get(i);
      if (id === undefined) {
        return item;
      }
      const text = texts.get(id);
      if (text === null || text === undefined) {
        throw ApiError.invalid(
          `input[${i}] refers to the item '${id}', which this gateway does not keep for your account: it is ` +
            `unknown, expired (items are kept ${this.config.responses.itemTtlDays} days), deleted, or another ` +
            "account's. Send the item itself instead.",
          `input[${i}].id`,
        );
      }
      added += Buffer.byteLength(text);
      if (added > limit) {
        throw new ApiError(
          ErrorKind.PayloadTooLarge,
          `The items input refers to add up to more than the ${limit}-byte body limit (at input[${i}]): ` +
            'refer to fewer items, or send fewer of them again.',
        );
      }
      return JSON.parse(text) as Json;
    });
  }

  /** The account's kept answer: its output items and usage (its input was never kept); null when there is none. */
  async find(accountId: string, id: string): Promise<Json | null> {
    const found = await this.repository.find(accountId, id);
    if (!found) {
      return null;
    }
    const summary = this.opened(found.sealed);
    const output = found.items.map((sealed) => this.opened(sealed));
    if (summary === null || output.includes(null)) {
      return null;
    }
    return {
      id,
      object: 'response',
      ...summary,
      error: null,
      output,
      store: true,
    };
  }

  delete(accountId: string, id: string): Promise<boolean> {
    return this.repository.delete(accountId, id);
  }

  /**
   * A sealed item or summary as JSON; null when absent, or sealed under another SECRETS_KEY (a key
   * replaced since), which is as good as gone.
   */
  private opened(sealed: string | undefined): Json | null {
    const text = this.openedText(sealed);
    return text === null ? null : (JSON.parse(text) as Json);
  }

  /** The JSON text of a sealed item; null as for opened(). What was sealed was JSON (save()). */
  private openedText(sealed: string | undefined): string | null {
    if (sealed === undefined) {
      return null;
    }
    try {
      return this.secrets.open(sealed);
    } catch {
      return null;
    }
  }

  private async save(accountId: string, response: Json, output: Json[]): Promise<void> {
    const summary = Object.fromEntries(SUMMARY_FIELDS.map((field) => [field, response[field] ?? null]));
    await this.repository.save({
      id: String(response.id),
      accountId,
      sealed: this.secrets.seal(JSON.stringify(summary)),
      expiresAt: new Date(Date.now() + this.config.responses.itemTtlDays * DAY_MS),
      items: output.map((item) => ({ id: String(item.id), sealed: this.secrets.seal(JSON.stringify(item)) })),
    });
  }
}

/** The place and id of each `item_reference` in `input`, by place. */
function referencedIds(input: unknown[]): Map<number, string> {
  const ids = new Map<number, string>();
  input.forEach((item, i) => {
    if (isRecord(item) && item.type === 'item_reference') {
      if (typeof item.id !== 'string' || item.id === '') {
        throw ApiError.invalid(`input[${i}].id must be the id of an output item.`, `input[${i}].id`);
      }
      ids.set(i, item.id);
    }
  });
  return ids;
}
