import { splitList } from 'src/config/trusted-proxies';

/** The origins a browser surface accepts: a list, or any origin ('*', only where no credentials are sent). */
export type CorsOrigins = readonly string[] | '*';

/** True when `value` is exactly a browser origin: http(s), a host, maybe a port, no path or trailing slash. */
export function isOrigin(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.origin === value.toLowerCase();
  } catch {
    return false;
  }
}

export function isOriginList(value: string, allowAny: boolean): boolean {
  const entries = splitList(value);
  if (allowAny && entries.length === 1 && entries[0] === '*') {
    return true;
  }
  return entries.length > 0 && entries.every(isOrigin);
}

/** Origins compare as the browser sends them: scheme and host in lower case. */
export function corsOriginsOf(value: string | undefined): CorsOrigins {
  const entries = splitList(value ?? '');
  return entries.length === 1 && entries[0] === '*' ? '*' : entries.map((entry) => entry.toLowerCase());
}
