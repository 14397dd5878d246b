/** A configuration value is missing or wrong; the message names the source (file, env var, flag) and the fix. */
export class ConfigError extends Error {
  override name = "ConfigError";
}
