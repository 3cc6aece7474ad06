/** The line diff lives in src/shared (the host and the CLI use it too). */
export { diffLines, withContext, hunksOf, applyHunks, type DiffLine, type Hunk, type HunkChoice } from '../src/shared/diff/lineDiff';
