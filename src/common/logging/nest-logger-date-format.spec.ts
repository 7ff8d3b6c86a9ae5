import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..', '..');

/**
 * Run in a fresh process: loads `module` and reports how much of the node binary became resident
 * meanwhile (KB of its mappings in /proc/self/smaps), whether `Intl.DateTimeFormat` is the constructor
 * it was, and the time stamp Nest's console logger prints.
 */
const PROBE = `
const { readFileSync } = require('node:fs');
function binaryKb() {
  let mapping = '';
  let kb = 0;
  for (const line of readFileSync('/proc/self/smaps', 'utf8').split('\\n')) {
    const header = /^[0-9a-f]+-[0-9a-f]+ \\S+ \\S+ \\S+ \\S+\\s*(.*)$/.exec(line);
    if (header) mapping = header[1];
    else if (line.startsWith('Rss:') && mapping === process.execPath) kb += Number(line.split(/\\s+/)[1]);
  }
  return kb;
}
const original = Intl.DateTimeFormat;
const before = binaryKb();
require(process.env.PROBE_MODULE);
const binaryKbLoaded = binaryKb() - before;
const { ConsoleLogger } = require('@nestjs/common');
console.log(JSON.stringify({
  binaryKbLoaded,
  sameConstructor: Intl.DateTimeFormat === original,
  timestamp: new ConsoleLogger().getTimestamp(),
}));
`;

interface Probe {
  binaryKbLoaded: number;
  sameConstructor: boolean;
  timestamp: string;
}

function loadInFreshProcess(module: string): Probe {
  const output = execFileSync(
    process.execPath,
    ['-r', 'ts-node/register/transpile-only', '-r', 'tsconfig-paths/register', '-e', PROBE],
    { cwd: ROOT, env: { ...process.env, PROBE_MODULE: module }, encoding: 'utf8' },
  );
  return JSON.parse(output.trim().split('\n').pop()!) as Probe;
}

/** A time stamp with its digits blanked, to compare two taken at different moments. */
const shape = (timestamp: string) => timestamp.replace(/\d/g, '0');

describe('loading Nest with its console logger date formatter made on first use', () => {
  let nestAlone: Probe;
  let nestDeferred: Probe;

  beforeAll(() => {
    nestAlone = loadInFreshProcess('@nestjs/common');
    nestDeferred = loadInFreshProcess('src/common/logging/nest-logger-date-format');
  }, 60_000);

  it('should keep ICU date data out of the process: at least 4 MB less of the node binary resident', () => {
    // Nest alone: ~6.5 MB on Node 20; through the module: ~0.4 MB.
    expect(nestAlone.binaryKbLoaded - nestDeferred.binaryKbLoaded).toBeGreaterThan(4 * 1024);
  });

  it("should leave Intl.DateTimeFormat as it was, and Nest's console logger stamping times as before", () => {
    expect(nestDeferred.sameConstructor).toBe(true);
    expect(nestDeferred.timestamp).toMatch(/\d{2}.\d{2}.\d{4}/);
    expect(shape(nestDeferred.timestamp)).toBe(shape(nestAlone.timestamp));
  });
});
