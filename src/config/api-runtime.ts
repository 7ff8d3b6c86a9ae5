/**
 * Node flags the API runs with in production (`npm run start:prod`, the Docker image, compose, the
 * benchmark and the demo; a test keeps them in step). A stream's objects live about a second, long
 * enough to be promoted out of V8's young generation, so under many concurrent streams the old
 * space fills with garbage, and V8's default heap growth (up to 4x the live heap before the next
 * full collection) let 1,000 streams take the API to ~460 MB RSS while its live heap stayed under
 * ~80 MB. Growing the heap by 20 % of what is live makes V8 collect before RSS grows (1,000
 * streams: ~240 MB). It is a growth rate, not a cap: a burst of large bodies (images, up to
 * BODY_LIMIT_BYTES each) still gets the memory it needs instead of failing the process.
 */
export const API_NODE_FLAGS = ['--heap-growing-percent=20'];
