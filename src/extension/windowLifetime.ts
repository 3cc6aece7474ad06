import type { InspectionEvent } from 'xstate';
import { AppLifetime } from '../core/machines/appSession/appLifetime';
import type { Logger } from './logger';
import { type KeelSettings, SECRET_KEYS, keyProblem, providerOf } from './providerConfig';

/** What a window's lifetime reads and does; free of 'vscode' (extension.ts passes the real ones). */
export interface WindowLifetimeDeps {
  /** The `keel.*` settings as they are now (in memory: no file is read). */
  settings(): KeelSettings;
  /** A key in SecretStorage (read only when the app session checks a provider that needs one). */
  secret(key: string): PromiseLike<string | undefined>;
  env: Record<string, string | undefined>;
  /** What closing the window saves: the chat's tasks stopped, the unsettled ones recorded as interrupted. */
  /** Stops the window's tasks (recorded as interrupted); resolves once their records are written and their locks released. */
  close(): void | Promise<void>;
  log: Logger;
  inspect?(event: InspectionEvent): void;
}

/** A window's lifetime and the two things that change it besides its tasks. */
export interface WindowLifetime {
  readonly app: AppLifetime;
  /** A SecretStorage key changed (stored, replaced or deleted). */
  keyChanged(key: string): void;
  /** A `keel.*` setting changed. */
  settingsChanged(): void;
}

/**
 * The extension window's lifetime, the appSession machine with the window's hooks: init reads
 * the provider setting; auth checks its key (SecretStorage, then the environment; only Anthropic
 * needs one); saving closes the chat (tasks recorded as interrupted). Not started: the caller
 * starts it once everything `close` needs exists.
 */
export function windowLifetime(deps: WindowLifetimeDeps): WindowLifetime {
  const app: AppLifetime = new AppLifetime(
    {
      loadSettings: async () => ({ provider: providerOf(deps.settings()) }),
      checkAuth: async (provider) => {
        const p = providerOf({ ...deps.settings(), provider });
        const secret = p === 'anthropic' ? await deps.secret(SECRET_KEYS.anthropic) : undefined;
        const problem = keyProblem(p, secret, deps.env);
        if (problem) throw new Error(problem);
      },
      save: () => deps.close(),
    },
    {
      provider: providerOf(deps.settings()),
      onState: (state) => (state === 'auth.missing' ? deps.log.info(`app session: ${state} (${app.authProblem ?? ''})`) : deps.log.debug(`app session: ${state}`)),
      ...(deps.inspect ? { inspect: deps.inspect } : {}),
    },
  );
  let provider = providerOf(deps.settings());
  return {
    app,
    keyChanged: (key) => {
      if ((Object.values(SECRET_KEYS) as string[]).includes(key)) app.keySet();
    },
    settingsChanged: () => {
      const now = providerOf(deps.settings());
      if (now === provider) return;
      provider = now;
      app.providerChanged(now);
    },
  };
}
