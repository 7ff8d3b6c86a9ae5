import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from 'src/config/app-config';
import { BoundedGate } from 'src/modules/auth/bounded-gate';
import { hashPassword, verifyPassword } from 'src/modules/auth/password-hasher';

/**
 * Password hashing through a per-process gate. Each scrypt call takes 32 MiB and one of libuv's four
 * threads for tens of milliseconds, and those threads also serve DNS lookups and file reads; left
 * unbounded, a login flood occupies all four and the CPU, and every completion waits behind it.
 */
@Injectable()
export class PasswordHasherService {
  private readonly gate: BoundedGate;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.gate = new BoundedGate(config.auth.hashConcurrency, config.auth.hashQueue);
  }

  hash(password: string): Promise<string> {
    return this.gate.run(() => hashPassword(password));
  }

  verify(password: string, stored: string): Promise<boolean> {
    return this.gate.run(() => verifyPassword(password, stored));
  }
}
