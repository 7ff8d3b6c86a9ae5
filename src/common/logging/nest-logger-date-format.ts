/**
 * Loads @nestjs/common with its console logger's date formatter made on first use.
 *
 * That logger builds an `Intl.DateTimeFormat` when its module loads. Building one reads ICU's date and
 * time-zone data out of the node binary: ~5 MB of it and ~1.5 MB of ICU's code stay resident for the
 * life of the process, and count in its RSS. The API and the worker log through pino, so that logger
 * seldom or never prints. Imported first by both entry points, before anything else loads Nest.
 *
 * While Nest's modules load, `Intl.DateTimeFormat` hands out stand-ins that build the real formatter,
 * with the same arguments, the first time anything is asked of them. It is restored straight after,
 * so every other caller gets the real constructor.
 */
const RealDateTimeFormat = Intl.DateTimeFormat;

function formatterMadeOnFirstUse(...args: ConstructorParameters<typeof Intl.DateTimeFormat>): Intl.DateTimeFormat {
  let real: Intl.DateTimeFormat | undefined;
  return new Proxy({} as Intl.DateTimeFormat, {
    get(_, property) {
      real ??= new RealDateTimeFormat(...args);
      const value: unknown = Reflect.get(real, property, real);
      return typeof value === 'function' ? (value as (...rest: unknown[]) => unknown).bind(real) : value;
    },
  });
}

Intl.DateTimeFormat = formatterMadeOnFirstUse as unknown as typeof Intl.DateTimeFormat;
try {
  // A require, not an import: it must run between the two assignments around it.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  require('@nestjs/common');
} finally {
  Intl.DateTimeFormat = RealDateTimeFormat;
}
