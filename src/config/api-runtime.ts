/**
 * Node flags the API runs with in production (`npm run start:prod`, the Docker image, compose, the
 * Kubernetes manifest, the benchmark and the demo; a test keeps them in step). A stream's objects live
 * about a second, long enough to be promoted out of V8's young generation, so under many concurrent
 * streams the old space fills with garbage, and V8's default heap growth (up to 4x the live heap before
 * the next full collection) let 1,000 streams take the API to ~460 MB RSS while its live heap stayed
 * under ~80 MB. Growing the heap by 20 % of what is live makes V8 collect before RSS grows (1,000
 * streams: ~240 MB). It is a growth rate, not a cap: a burst of large bodies (images, up to
 * BODY_LIMIT_BYTES each) still gets the memory it needs instead of failing the process.
 *
 * 20 % of the ~45 MB live at rest is ~9 MB of room, and V8 counts memory outside its heap (a request
 * body's buffers, an image's string) against it until a collection frees them: a 1 MB image request
 * spends ~3 MB of it, so such requests ran a full collection (13-55 ms of marking on the main thread,
 * then a pause of 5-21 ms) every few requests.
 * No full collection before the old space reaches 80 MB gives them ~35 MB of room (image CPU per
 * request about a third lower) and changes nothing once streams keep more than ~65 MB live, where 20 %
 * already asks for more (docs/performance.md, "Memory").
 *
 * The young generation is capped at two 8 MB semi-spaces (V8's default: 16 MB). Under load it
 * grows to its cap and stays there, resident; halving it took 1,000 streams from ~255 to ~227 MB
 * RSS, for ~3 % of the 50-client JSON throughput (more frequent scavenges of the same survivors).
 *
 * V8 runs its background work (parallel scavenges, concurrent marking and sweeping, compiling) on a
 * pool of four threads by default, whatever the machine. The API's JavaScript is one thread and its
 * pods ask for half a core: one helper thread gave 1,000 streams ~10 MB less RSS (fewer per-thread
 * buffers and allocator arenas kept resident), with no longer event-loop stalls; the 50-client JSON
 * throughput paid 0-11 % in paired runs, streams nothing (docs/performance.md, "Memory").
 */
export const API_NODE_FLAGS = [
  '--heap-growing-percent=20',
  '--initial-old-space-size=80',
  '--max-semi-space-size=8',
  '--v8-pool-size=1',
];
