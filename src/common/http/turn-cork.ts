/** What a TurnCork writes to: a ServerResponse, or any Writable with `cork`. */
export interface Corkable {
  cork(): void;
  uncork(): void;
  write(chunk: string): boolean;
  end(chunk: string): unknown;
}

/**
 * One client's writes, leaving once an event-loop turn: the first write of a turn corks the
 * response, and the turn's check phase (`setImmediate`) uncorks it, after the turn's I/O callbacks
 * and promise reactions, as one-write.ts does for Redis. A stream's events that arrive in one turn
 * then leave in one write. `holdWhile` keeps the turn's writes for the response's `end`, which
 * flushes them with the last bytes: a short answer's events, then its end after the usage record,
 * cost the client one write instead of two. A lone event waits for nothing but the rest of its turn.
 */
export class TurnCork {
  private corked = false;
  private held = false;

  constructor(private readonly target: Corkable) {}

  write(chunk: string): boolean {
    if (!this.corked) {
      this.corked = true;
      this.target.cork();
      setImmediate(() => {
        if (!this.held) {
          this.release();
        }
      });
    }
    return this.target.write(chunk);
  }

  /**
   * Runs `work` with this turn's writes held back, for `end` to send with the last bytes. If `work`
   * fails they leave at once, for the caller's error path.
   */
  async holdWhile<T>(work: () => Promise<T>): Promise<T> {
    this.held = true;
    try {
      return await work();
    } catch (error) {
      this.release();
      throw error;
    }
  }

  /** Ends the response with `chunk`: whatever is corked leaves with it (a response's `end` uncorks fully). */
  end(chunk: string): void {
    this.target.end(chunk);
    this.corked = false;
    this.held = false;
  }

  private release(): void {
    this.held = false;
    if (this.corked) {
      this.corked = false;
      this.target.uncork();
    }
  }
}
