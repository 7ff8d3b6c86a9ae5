/**
 * Node flags the API runs with in production (`npm run start:prod`, the Docker image, compose, the
 * benchmark and the demo; a test keeps them in step). A stream's objects live about a second, long
 * enough to be promoted out of V8's young generation, so under many concurrent streams the old
 * space fills with garbage faster than V8's default heap growth collects it: 1,000 streams took
 * the API to ~460 MB RSS while its live heap stayed under ~80 MB. Capping the old space makes V8
 * collect before it grows. 224 MB leaves room for MAX_CONCURRENT_COMPLETIONS (2,048 by default)
 * streams of ~35 KB live each over the ~55 MB the process holds at rest.
 */
export const API_NODE_FLAGS = ['--max-old-space-size=224'];
