import { MIN_KNOWN_SECRET_LENGTH, redactSecrets } from './secrets';
import { StreamRedactor } from './streamRedactor';
import { isKeyVariable, toolEnvironment } from './toolEnvironment';

/**
 * What one host (an extension window, a CLI run) keeps from tool processes and from the model:
 * the keys it holds (registered as it reads them: from SecretStorage, from the environment, from a
 * provider's config) and the variable names the person chose to pass through anyway. Every tool
 * process gets `environment()`; every tool result and every chunk of live tool output goes through
 * `redact()` / `streamRedactor()` before the model, the views or the task log see it.
 */
export class SecretKeeper {
  private readonly held = new Set<string>();
  readonly passThrough: readonly string[];
  private extra: () => Readonly<Record<string, string>>;

  /**
   * `extra`: variables set on top of the filtered environment (the settings files' `env`, as the
   * person allowed it: permissions/settingsEnv.ts); read for every process.
   */
  constructor(opts: { passThrough?: readonly string[]; values?: Iterable<string | undefined>; extra?: () => Readonly<Record<string, string>> } = {}) {
    this.passThrough = [...(opts.passThrough ?? [])];
    this.extra = opts.extra ?? (() => ({}));
    for (const v of opts.values ?? []) this.remember(v);
  }

  /** Sets where the settings files' variables come from (a runtime given a host's keeper does). */
  setExtra(extra: () => Readonly<Record<string, string>>): void {
    this.extra = extra;
  }

  /** The settings files' variables now (see the constructor). */
  extraEnvironment(): Readonly<Record<string, string>> {
    return this.extra();
  }

  /**
   * A keeper holding the keys found in `env` (the provider keys and `KEEL_*` secrets): what a host
   * starts with before it reads anything else.
   */
  static fromEnvironment(env: NodeJS.ProcessEnv, passThrough: readonly string[] = [], extra?: () => Readonly<Record<string, string>>): SecretKeeper {
    const values = Object.entries(env)
      .filter(([name]) => isKeyVariable(name))
      .map(([, value]) => value);
    return new SecretKeeper({ passThrough, values, ...(extra ? { extra } : {}) });
  }

  /** Registers a key Keel holds. Empty or short values (under 8 characters) are ignored. Idempotent. */
  remember(value: string | undefined): void {
    const v = value?.trim();
    if (v && v.length >= MIN_KNOWN_SECRET_LENGTH) this.held.add(v);
  }

  /** The keys registered so far. */
  values(): string[] {
    return [...this.held];
  }

  /** The environment for a tool process (toolEnvironment.ts), from `base` (default: Keel's own). */
  environment(base: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
    return { ...toolEnvironment({ secretValues: this.held, passThrough: this.passThrough }, base), ...this.extra() };
  }

  /** `text` with every secret (known shapes and the keys held) redacted. */
  redact(text: string): string {
    return redactSecrets(text, this.held);
  }

  /** A redactor for one stream of live output (see StreamRedactor). */
  streamRedactor(): StreamRedactor {
    return new StreamRedactor(() => this.held);
  }
}
