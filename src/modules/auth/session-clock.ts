import { Injectable } from '@nestjs/common';

/**
 * The time console sessions go by: their refresh expiry, their absolute end, the grace of a traded
 * refresh token. Every check of those is made at this clock's `now` (passed to the queries, not the
 * database's now()), so tests move it days or seconds ahead instead of waiting.
 */
@Injectable()
export class SessionClock {
  now(): Date {
    return new Date();
  }
}
