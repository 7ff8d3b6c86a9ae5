/** Thrown for bad configuration; the entrypoints print its message as the one line naming the variable. */
export class ConfigError extends Error {}
