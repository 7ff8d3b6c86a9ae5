/**
 * Node flags the API runs with in production (`npm run start:prod`, the Docker image, compose, the
 * benchmark and the demo; a test keeps them in step). A stream's objects live about a second, long
 * enough to be promoted out of V8's young generation, so under many concurrent streams the old
 * space fills with garbage, and V8's default heap growth (up to 4x the live heap before the next
 * full collection) let 1,000 streams take the API to ~460 MB RSS while its live heap stayed under
 * ~80 MB. Growing the heap by 20 % of what is live makes V8 collect before RSS grows (1,000
 * streams: ~240 MB). It is a growth rate, not a cap: a burst of large bodies (images, up to
 * BODY_LIMIT_BYTES each) still gets the memory it needs instead of failing the process.
 *
 * The young generation is capped at two 8 MB semi-spaces (V8's default: 16 MB). Under load it
 * grows to its cap and stays there, resident; halving it took 1,000 streams from ~255 to ~227 MB
 * RSS, for ~3 % of the 50-client JSON throughput (more frequent scavenges of the same survivors).
 */
export const API_NODE_FLAGS = ['--heap-growing-percent=20', '--max-semi-space-size=8'];
