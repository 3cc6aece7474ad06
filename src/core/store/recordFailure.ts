/** What went wrong with a task's record, in a person's words, by the error's code. */
const REASONS: Record<string, string> = {
  ENOSPC: 'the disk is full',
  EDQUOT: 'the disk quota is used up',
  EFBIG: 'a file grew past the size limit this process may write (ulimit -f)',
  ENOENT: "the task's folder was removed or moved",
  EROFS: 'the disk became read-only',
  EIO: 'the disk reported an input/output error',
  EACCES: "the task's files may no longer be written (permissions changed)",
  EPERM: "the task's files may no longer be written (permissions changed)",
};

/**
 * The sentence a person reads when a task's record could not be saved: which record, why (in
 * words, then the system's code), e.g. "the record of this task could not be saved in
 * /home/me/.keel/tasks/1234: the disk is full (ENOSPC: no space left on device, write)".
 */
export function describeRecordFailure(err: Error, dir: string): string {
  const code = (err as NodeJS.ErrnoException).code;
  const reason = code && REASONS[code] ? `${REASONS[code]} (${err.message})` : err.message;
  return `the record of this task could not be saved in ${dir}: ${reason}`;
}
