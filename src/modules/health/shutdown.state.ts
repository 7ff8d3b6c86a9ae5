import { Injectable } from '@nestjs/common';

/** Set when SIGTERM arrives, so readiness fails and load balancers stop sending new requests. */
@Injectable()
export class ShutdownState {
  draining = false;
}
