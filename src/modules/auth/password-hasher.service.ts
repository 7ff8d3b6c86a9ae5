import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from 'src/config/app-config';
import { BoundedGate } from 'src/modules/auth/bounded-gate';
import { hashPassword, placeholderHash, verifyPassword } from 'src/modules/auth/password-hasher';
import { ScryptPool } from 'src/modules/auth/scrypt-pool';

/**
 * Password hashing, bounded per process. Each scrypt call takes 32 MiB and tens of milliseconds of a
 * core. Unbounded and on libuv's four threads (which DNS lookups and file reads share), a login flood
 * took every one of them and the CPU, and completions slowed to a fifth. Here hashes run a few at a
 * time (the gate: past its short queue, 503 at once) on low-priority threads of their own.
 */
@Injectable()
export class PasswordHasherService implements OnModuleDestroy {
  private readonly gate: BoundedGate;
  private readonly pool = new ScryptPool();
  private readonly cost: number;
  /** A hash no password matches, at the cost new hashes take: what a login for an unknown e-mail checks. */
  readonly placeholderHash: string;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.gate = new BoundedGate(config.auth.hashConcurrency, config.auth.hashQueue);
    this.cost = config.auth.hashCost;
    this.placeholderHash = placeholderHash(this.cost);
  }

  hash(password: string): Promise<string> {
    return this.gate.run(() => hashPassword(password, this.pool.derive, this.cost));
  }

  verify(password: string, stored: string): Promise<boolean> {
    return this.gate.run(() => verifyPassword(password, stored, this.pool.derive));
  }

  onModuleDestroy(): Promise<void> {
    return this.pool.close();
  }
}
