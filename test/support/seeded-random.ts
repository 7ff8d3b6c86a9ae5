/** A small deterministic generator (mulberry32): the same seed gives the same sequence on every run. */
export class SeededRandom {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** A float in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(0, items.length - 1)];
  }

  /** `length` characters drawn from the code points [from, to]. */
  chars(length: number, from: number, to: number): string {
    if (to > 0xffff) {
      return Array.from({ length }, () => String.fromCodePoint(this.int(from, to))).join('');
    }
    // One UTF-16 unit each: built in chunks, as megabytes of text are common in the tests.
    const units = new Uint16Array(length).map(() => this.int(from, to));
    let text = '';
    for (let start = 0; start < length; start += 8192) {
      text += String.fromCharCode(...units.subarray(start, start + 8192));
    }
    return text;
  }
}
