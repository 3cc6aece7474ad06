import type { CheckpointLimits } from '../core/checkpoints/recorder';

/**
 * The checkpoint limits of `keel run` (docs/cli.md): `KEEL_CHECKPOINT_MAX_FILE_BYTES` and
 * `KEEL_CHECKPOINT_MAX_TASK_BYTES` (whole bytes), `KEEL_CHECKPOINTS=off` for none. A value that is
 * not a whole number is reported through `warn` and the default kept: never silently.
 */
export function checkpointSettings(env: NodeJS.ProcessEnv, warn: (message: string) => void): Partial<CheckpointLimits> | false {
  if (env.KEEL_CHECKPOINTS === 'off') return false;
  const out: Partial<CheckpointLimits> = {};
  const read = (name: string, key: 'maxFileBytes' | 'maxTaskBytes') => {
    const v = env[name];
    if (v === undefined || v === '') return;
    if (/^\d+$/.test(v) && Number(v) > 0) out[key] = Number(v);
    else warn(`${name}=${JSON.stringify(v)} is not a whole number of bytes; the default limit is used`);
  };
  read('KEEL_CHECKPOINT_MAX_FILE_BYTES', 'maxFileBytes');
  read('KEEL_CHECKPOINT_MAX_TASK_BYTES', 'maxTaskBytes');
  return out;
}
