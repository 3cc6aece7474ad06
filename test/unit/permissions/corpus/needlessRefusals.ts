import type { PermissionMode } from '../../../../src/core/runtime/types';
import { TOUR_COMMAND } from '../../../../src/core/providers/demoTour';
import { initRepo } from './repo';
import type { BashCase, CorpusGroup, Decision } from './types';

/**
 * Issue 22's needless refusals: forms people meet every day that only read (no rule needed),
 * and Claude Code's standard commit under `Bash(git commit:*)`. Each has neighbours that change
 * something and still ask.
 */
type Row = [command: string, expect: Decision, mode?: PermissionMode];
const rows = (group: string, list: Row[]): BashCase[] => list.map(([command, expect, mode]) => ({ group, command, expect, ...(mode ? { mode } : {}) }));

const COMMIT = "git commit -m \"$(cat <<'EOF'\nFix the parser\n\nGenerated with Keel\n\nCo-Authored-By: Someone <someone@example.invalid>\nEOF\n)\"";

const ROWS: Row[] = [
  [COMMIT, 'allow'],
  ["git commit -m \"$(cat <<EOF\nFix $x\nEOF\n)\"", 'allow'],
  ["git commit -m \"$(cat <<'EOF'\nx\nEOF\n)\" && git push", 'ask'],
  ['sed -n 1,5p src/a.ts', 'allow'],
  ['sed -n 1,5p src/a.ts', 'allow', 'plan'],
  ["sed -n '1,5w out.txt' src/a.ts", 'ask'],
  ["sed -i 's/a/b/' src/a.ts", 'ask'],
  ['base64 src/a.ts', 'allow'],
  ['base64 -d src/a.ts', 'allow'],
  ['od -c src/a.ts', 'allow'],
  ['numfmt --to=iec 1048576', 'allow'],
  ['stat link-out', 'allow'],
  ['readlink link-out', 'allow'],
  ['readlink -f link-out', 'allow'],
  ['ls -la link-out', 'allow'],
  ['ls -la link-out/', 'ask'],
  ['stat /etc/passwd', 'ask'],
  ['ls -d */', 'allow'],
  ['ls -d ../*/', 'ask'],
  ['df -h .', 'allow'],
  ['df -h /', 'ask'],
  ['tee /dev/null', 'allow'],
  ['tee out.txt', 'ask'],
  ['diff <(ls) <(ls -a)', 'allow'],
  ['node --version', 'allow'],
  ['node -v', 'allow'],
  ['node --version -e 1', 'ask'],
  // The demo tour's command must ask, or the tour shows no Bash permission card.
  [TOUR_COMMAND, 'ask'],
  ['node app.js', 'ask'],
  ['python3 --version', 'allow'],
  ['python3 -V', 'allow'],
  ['python3 -c 1', 'ask'],
  ['go version', 'allow'],
  ['git rev-list --count HEAD', 'allow'],
  ['git symbolic-ref --short HEAD', 'allow'],
  ['git symbolic-ref HEAD refs/heads/x', 'ask'],
  ['git stash list', 'allow'],
  ['git stash drop', 'ask'],
  ['git worktree list', 'allow'],
  ['git worktree add ../w', 'ask'],
  ['git cat-file -t HEAD', 'allow'],
  ['git cat-file -s HEAD', 'allow'],
  ['git config --get user.name', 'allow'],
  ['git config user.name', 'allow'],
  ['git config user.name x', 'ask'],
  ['git config --list', 'ask'],
  ['git -C . branch --show-current', 'allow'],
  ['git -C src log -1', 'allow'],
  ['git -C ../outside status', 'ask'],
];

export const NEEDLESS_REFUSAL_GROUP: CorpusGroup = {
  name: 'read-only forms people meet every day',
  settings: { permissions: { allow: ['Bash(git commit:*)'] } },
  prepare: initRepo,
  bash: rows('needless-refusals', ROWS),
};
