import { DEFAULT_MODELS } from '../shared/domain/models';
import { PERMISSION_MODES } from '../shared/domain/permissionModes';
import { DEFAULT_ANTHROPIC_HEADER_TIMEOUT_MS, DEFAULT_OPENAI_HEADER_TIMEOUT_MS, DEFAULT_STALL_TIMEOUT_MS, TIMEOUT_SECONDS } from '../core/providers/timeouts';

export { KEEL_VERSION as VERSION } from '../shared/version';

export const HELP = `keel — a coding agent whose every behaviour is an explicit state machine

Usage:
  keel run "<prompt>" [options]     run a task to completion and stream it
  keel run --resume ID ["<follow-up>"] [options]
                                    continue a stored task (an interrupted one resumes)
  keel tasks list [--json] [--all]  stored tasks: id, title, status, time, tokens, cost
  keel tasks show ID                one task's figures and chat
  keel tasks export ID --format md|json [--output FILE]
  keel tasks delete ID              (tasks commands take --storage DIR too)
  keel tasks replay ID [--until N]  re-run a task from its log and check the same events come out
  keel tasks checkpoints ID         the steps that can be rewound to, with the files each changed
  keel tasks rewind ID --to STEP [--files-only|--conversation-only] [--dry-run]
                                    put files and/or conversation back as before STEP (a step too)
  keel tasks fork ID --at STEP [--with-files]
                                    a new task from before STEP; prints its id
  keel memory list|search|show|delete [--workspace DIR]
                                    the project's memories (.keel/memory/*.md)
  keel permissions check --tool NAME --input JSON... [--workspace DIR] [--settings FILE]... [--mode MODE] [--home DIR]
                                    print the decision a run would reach for each tool call,
                                    one JSON line per --input ("ask" where a run would ask)
  keel mcp list|tools|add|remove|approve|revoke|login|logout|serve
                                    MCP servers (keel mcp --help for details)
  keel batch FILE [options]         one task per line of FILE, in parallel on worker processes
  keel machines [--json]            print the state machines (states and transitions)
  keel loop "<goal>" [loop options] [run options]
                                    run a goal as a judged loop of fresh tasks (docs/loop.md)
  keel status [--json] [--follow]   live tasks, sub-agents and loops of every Keel process
  keel workers [--json]             the worker pools of every Keel process and their workers
  keel events --follow              the live event bus of every Keel process, as NDJSON
  keel hooks list|approve|revoke [--workspace DIR] [--json]
                                    a workspace's hooks and their state (docs/hooks.md)
  keel trust show|approve|revoke [--workspace DIR] [--json] [--fingerprint F]
                                    the one approval of what a workspace provides that loosens
                                    permissions or runs code (docs/permissions.md#trust)
  keel --help | --version
  keel COMMAND --help               the options of one command (keel run --help: those of run)

Exit status: 0 success, 1 a task failed or was cancelled, 2 bad usage (one line on stderr saying
what is wrong), 3 when the storage folder cannot record the run.
`;

export const RUN_HELP = `Usage: keel run "<prompt>" [options]
       keel run --resume ID ["<follow-up>"] [options]
Runs one task to completion and streams it: the answer on stdout, tool activity on stderr (text),
or one JSON event a line (--output-format stream-json). The prompt is one argument: quote it.

Options:
  --workspace DIR          the folder the agent works in (default: current directory)
  --provider P             anthropic | openai-compatible | demo   (default: anthropic;
                           demo: a scripted tour of Keel, no key needed)
  --base-url URL           API base URL (Anthropic: https://api.anthropic.com;
                           OpenAI-compatible: e.g. http://localhost:11434/v1)
  --model ID               model id (default: ${DEFAULT_MODELS.anthropic} for anthropic,
                           ${DEFAULT_MODELS['openai-compatible']} for openai-compatible)
  --stall-timeout S        give the model's answer up as stalled, and try again (up to 3 times),
                           after S seconds without a part of it (keep-alive pings do not count):
                           ${TIMEOUT_SECONDS.min} to ${TIMEOUT_SECONDS.max}, default ${DEFAULT_STALL_TIMEOUT_MS / 1000}. Raise it for a slow local server that
                           pauses long mid-answer
  --response-timeout S     how long to wait for the server to start answering (its response
                           headers) before trying again: ${TIMEOUT_SECONDS.min} to ${TIMEOUT_SECONDS.max} seconds, default ${DEFAULT_ANTHROPIC_HEADER_TIMEOUT_MS / 1000} for
                           anthropic, ${DEFAULT_OPENAI_HEADER_TIMEOUT_MS / 1000} for openai-compatible (a local server loads the
                           model and reads the whole prompt first: minutes on a CPU)
  --mode MODE              ${PERMISSION_MODES.join(' | ')}
                           (headless, anything that would ask is denied). Default: the
                           settings files' defaultMode (a workspace file only stricter), else default
  --output-format F        text (default) | stream-json (one JSON event per line)
  --max-turns N            stop after N model calls (default 50)
  --storage DIR            where tasks are kept, a folder that exists (default: $KEEL_HOME
                           or ~/.keel, created when needed)
  --resume ID              continue stored task ID (or a unique prefix of it); it keeps
                           its workspace and model unless --workspace / --model say otherwise
  --mcp-config FILE        MCP servers from FILE (.mcp.json format) too; repeatable
  --approve-project-hooks  approve everything the workspace provides (its settings' allow
                           rules and env, hooks, MCP servers, instructions files, memories,
                           loops) as it is now, as keel trust approve does, before the run;
                           without it a run holds all of that back and says how to approve it
  --pass-env NAME          give tool processes (Bash, …) the variable NAME although Keel would
                           remove it (its keys, BASH_ENV, GIT_CONFIG_*, …); repeatable. Also:
                           "passEnv": ["NAME"] in ~/.keel/settings.json
  --no-memory              no project memory for this run: no search of .keel/memory/, no
                           lesson saved (also KEEL_MEMORY=off)
  --workers N              run the task's turns in a pool of at most N worker processes (each turn
                           loop in its own process; a worker that dies interrupts only its task);
                           0: in this process. Default KEEL_WORKERS, else 4 (as VS Code).
                           See docs/workers.md
  --image FILE             attach an image (PNG, JPEG, GIF or WebP, at most 5 MB; up to 20) to
                           the prompt; repeatable. Kept with the task: a resumed task has it
  --max-budget-usd N       pause the task before the model request that would take its cost
                           (sub-agents, retries, summaries and the memory lesson included) over
                           N US dollars; continue it with a higher cap: keel run --resume ID
                           --max-budget-usd M. Default: keel.maxBudgetUsd in ~/.keel/settings.json

A prompt that starts with /name runs a slash command: a custom one (.claude/commands/NAME.md,
.keel/commands/, ~/.claude/commands/) becomes the prompt with its arguments ($ARGUMENTS, $1…),
its allowed-tools narrowing what the run may do and its model; /help lists them.

Paths (--workspace, --storage, --mcp-config) are resolved from the current folder and must exist.
Keys come from the environment: ANTHROPIC_API_KEY, OPENAI_API_KEY. Tool processes never see
them, and known key shapes are redacted from tool output.
The Bash sandbox (bubblewrap, Linux) is set in ~/.keel/settings.json: "sandbox": {"enabled": true,
"network": {"allowedDomains": ["github.com"]}}; a project's settings can only tighten it.
Exit status: 0 when the task completes, 1 when it fails or is cancelled, 2 on bad usage (one
line on stderr saying what is wrong), 3 when the storage folder cannot record the run, 130 / 143
when ended by Ctrl+C / SIGTERM (the task can be resumed: keel run --resume ID), 6 when the task
paused at its budget (keel run --resume ID --max-budget-usd N continues it).
`;

export const MACHINES_HELP = `Usage: keel machines [--json]
Prints every state machine of Keel with its states (and, with --json, its transitions), derived
from the machine definitions themselves.
`;

export const HOOKS_HELP = `Usage: keel hooks [list|approve|revoke] [--workspace DIR] [--json] [--storage DIR]
Hooks come from the "hooks" sections of ~/.keel/settings.json (yours: they always run) and of the
workspace's .claude/settings.json, .claude/settings.local.json, .keel/settings.json and
.keel/settings.local.json (the repository's: they run only once you approve the workspace, in
their exact form and with the exact content of the files they run; a change needs approval
again). The approval is the workspace's one approval (keel trust, docs/permissions.md#trust),
kept in <keel home>/trust/ (--storage DIR, else $KEEL_HOME, else ~/.keel).
  list      every configured hook with its state: trusted, approved, waits for approval (default)
  approve   the same as keel trust approve: approves everything the workspace provides
  revoke    the same as keel trust revoke
`;

export const TRUST_HELP = `Usage: keel trust [show|approve|revoke] [--workspace DIR] [--json] [--fingerprint F] [--storage DIR]
What a workspace provides that loosens permissions or runs code waits for one approval of all of
it: allow rules, additionalDirectories, a looser defaultMode and env of its .claude/ and .keel/
settings files; their hooks and the .mcp.json servers (with their env and the content of every
file they run); KEEL.md, AGENTS.md, CLAUDE.md, .claude/CLAUDE.md and their @imports; memories in
.keel/memory/; loop folders in .keel/loop/. What only tightens (deny and ask rules, a stricter
mode) applies at once. A change to any item holds it back until approved again; an approval
belongs to this folder and the repository checked out there (a different clone at the same path
inherits nothing). Runs never approve by themselves: they say what they held back.
  show      everything with its state: approved, waits for approval, changed, cannot be
            approved (default); --json for a machine
  approve   approve everything listed, exactly as it is now; with --fingerprint F (printed by
            show) only if nothing changed since you looked
  revoke    forget this workspace's approval
Approvals are kept in <keel home>/trust/approvals.json (0600; --storage DIR, a folder that
exists, else $KEEL_HOME, else ~/.keel).
`;

export const STATUS_HELP = `Usage: keel status [--json] [--follow] [--storage DIR]
Lists every live task, sub-agent and loop of the Keel processes of this user (VS Code windows,
keel run, keel loop) with its status (waiting, working, needs you, compacting, done, error),
elapsed time, tokens and cost. Each process publishes on <keel home>/run/<pid>.sock (0600;
<keel home> is --storage DIR, else $KEEL_HOME, else ~/.keel).
  --json     one JSON object: {"agents": [...], "summary": "2 working · 1 needs you"}
  --follow   print every line the processes publish (NDJSON: hook events, task and loop
             events, board changes) until the first Ctrl+C or SIGTERM; while no Keel process
             is there, stderr says it waits for one
`;

export const WORKERS_HELP = `Usage: keel workers [--json] [--storage DIR]
Lists the worker pools of the Keel processes of this user that run tasks on workers (keel run
--workers N, keel batch, a VS Code window with keel.workers.max above 0): the pool's state and
size, and each worker's state, pid, task, uptime, queries processed and memory (from its last
health answer). Each process publishes its pool on <keel home>/run/<pid>.sock.
  --json     one JSON object: {"pools": [{"owner", "ownerPid", "state", "max", "workers": [...]}]}
`;

export const EVENTS_HELP = `Usage: keel events --follow [--storage DIR]
Prints the live event bus of every Keel process using this storage (keel run, keel loop,
keel batch; a VS Code window with --storage set to the extension's storage) as NDJSON, one event a
line with the pid it came from, until interrupted; processes that start later are joined. Kinds:
AppStarted, AppShutdown, SessionCreated, SessionStateChanged, ToolEventReceived, MemoryHit,
GatekeeperDecision, SessionCompleted, SessionFailed, TaskEvent, HookEvent, LoopEvent,
WorkerStateChanged, McpServerStateChanged, and Lagged (this reader fell behind and missed N
events: while stdout does not take more, nothing is read, and each process drops what does not fit
its 1,000-event queue for this reader; it never slows the process). While no Keel process is there,
stderr says it waits for one. The first Ctrl+C or SIGTERM ends it. Each process listens on
<storage>/events/<pid>.sock (0600, in a 0700 folder); <storage> is --storage DIR (a folder that
exists), else $KEEL_HOME, else ~/.keel.
  --follow   required: the bus is live only (stored events: keel tasks show ID)
`;

export const LOOP_HELP = `Usage: keel loop "<goal>" [--max-iterations N] [--promise TEXT] [--stop-word WORD]
                         [--name NAME] [--checkpoints] [run options]
       keel loop --resume NAME [run options]
Works toward one goal in iterations, each a fresh task (a new conversation) that reads the loop's
files under .keel/loop/<name>/: anchor.md (the goal), progress.md (kept current by the agent; it
may write it without a prompt in every mode but plan) and guardrails.md (errors seen 3 or more
times, appended by Keel). After each iteration a judge decides:
  complete   the stop word is in progress.md, or the final message ends with
             <promise>TEXT</promise> matching --promise
  stopped    --max-iterations is reached without the goal: not complete (exit 5)
  stalled    the same stop reason 5 times in a row, or progress.md unchanged for 3 iterations:
             the loop waits for you (edit its files, then keel loop --resume NAME)
  continue   a fresh iteration starts
  --max-iterations N   at most N iterations (default 50)
  --stop-word WORD     the word that marks the goal done in progress.md (default DONE)
  --promise TEXT       also complete when the final message says <promise>TEXT</promise>
  --name NAME          the loop's folder name (default: from the goal)
  --checkpoints        commit the workspace after each iteration on refs/keel/loop/<name>/<n>
                       (your branch and index are never touched)
  --resume NAME        continue a loop from its state.json (a stalled one goes on)
  --max-budget-usd N   one budget for the whole loop (every iteration, sub-agents, retries,
                       summaries): the loop pauses before a request that could take it over N
                       US dollars (exit 6); keel loop --resume NAME --max-budget-usd M goes on
The run options (--workspace, --provider, --model, --mode, --output-format, --max-turns, ...)
apply to every iteration; see keel run --help. With --output-format stream-json every loop
event ({"type":"loop",...}) and task event is one JSON line.
Loop files that are symbolic links (or sit under one) are refused: Keel never follows them.
Exit status: 0 complete, 1 cancelled or failed, 2 bad usage, 3 unusable storage, 4 stalled,
5 stopped at the iteration limit without reaching the goal, 6 paused at its budget.
`;

export const BATCH_HELP = `Usage: keel batch FILE [run options] [--workers N]
Runs one task per line of FILE in parallel, each on a worker process of a pool of N (default 2).
A line is a prompt, or a JSON object {"prompt": "...", "mode": "acceptEdits"}; empty lines and
lines starting with # are skipped. Every event is printed as one JSON line tagged with the task's
line number ({"line": 3, "type": "text", ...}); {"type": "worker", "line", "taskId", "workerId",
"pid"} says which worker runs a task. A summary table goes to stderr at the end.
Exit status: 0 when every task completed, 1 when any did not, 2 on bad usage.
`;

export const MCP_HELP = `Usage:
  keel mcp list [--json]                     configured servers, connected to show their state
  keel mcp tools NAME [--json]               the tools of one server, as the model sees them
  keel mcp add [--scope project|user] [-e KEY=VALUE]... NAME -- COMMAND [ARGS...]
  keel mcp add --transport http|sse [--scope project|user] [-H 'Name: value']... NAME URL
  keel mcp remove NAME [--scope project|user]
  keel mcp approve NAME                      approve the workspace (keel trust approve: everything it
                                             provides, NAME's server included)
  keel mcp revoke NAME                       forget the approval of NAME (held back until approved again)
  keel mcp login NAME                        sign in to a remote server with OAuth (prints the
                                             address to open; tokens in $KEEL_HOME/mcp-oauth.json)
  keel mcp logout NAME                       forget the tokens Keel keeps for that server
  keel mcp serve [--workspace DIR] [--mode MODE]
                                             Keel's Read, Write, Edit, Bash, Glob, Grep as an
                                             MCP server over stdio
Options: --workspace DIR (default: current directory), --mcp-config FILE (list, tools, login, logout; repeatable),
--storage DIR (Keel's home: your mcp.json and the approvals; a folder that exists; default $KEEL_HOME, else ~/.keel).
Project servers come from DIR/.mcp.json, user servers from $KEEL_HOME/mcp.json (default ~/.keel).
`;
