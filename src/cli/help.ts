import { DEFAULT_MODELS } from '../shared/domain/models';
import { PERMISSION_MODES } from '../shared/domain/permissionModes';

export const VERSION = '0.1.0';

export const HELP = `keel — a coding agent whose every behaviour is an explicit state machine

Usage:
  keel run "<prompt>" [options]     run a task to completion and stream it
  keel run --resume ID ["<follow-up>"] [options]
                                    continue a stored task (an interrupted one resumes)
  keel tasks list [--json] [--all]  stored tasks: id, title, status, time, tokens, cost
  keel tasks show ID                one task's figures and chat
  keel tasks export ID --format md|json [--output FILE]
  keel tasks delete ID              (tasks commands take --storage DIR too)
  keel permissions check --tool NAME --input JSON... [--workspace DIR] [--settings FILE]... [--mode MODE] [--home DIR]
                                    print the decision a run would reach for each tool call,
                                    one JSON line per --input ("ask" where a run would ask)
  keel batch FILE [options]         one task per line of FILE, in parallel on worker processes
  keel machines [--json]            print the state machines (states and transitions)
  keel --help | --version
  keel COMMAND --help               the options of one command

Options for run:
  --workspace DIR          the folder the agent works in (default: current directory)
  --provider P             anthropic | openai-compatible | demo   (default: anthropic;
                           demo: a scripted tour of Keel, no key needed)
  --base-url URL           API base URL (Anthropic: https://api.anthropic.com;
                           OpenAI-compatible: e.g. http://localhost:11434/v1)
  --model ID               model id (default: ${DEFAULT_MODELS.anthropic} for anthropic,
                           ${DEFAULT_MODELS['openai-compatible']} for openai-compatible)
  --mode MODE              ${PERMISSION_MODES.join(' | ')}
                           (headless, anything that would ask is denied)
  --output-format F        text (default) | stream-json (one JSON event per line)
  --max-turns N            stop after N model calls (default 50)
  --storage DIR            where tasks are kept (default: $KEEL_HOME or ~/.keel)
  --resume ID              continue stored task ID (or a unique prefix of it); it keeps
                           its workspace and model unless --workspace / --model say otherwise
  --pass-env NAME          give tool processes (Bash, …) the variable NAME although Keel would
                           remove it (its keys, BASH_ENV, GIT_CONFIG_*, …); repeatable. Also:
                           "passEnv": ["NAME"] in ~/.keel/settings.json
  --workers N              run the task's turns in a pool of N worker processes (each turn loop
                           in its own process; a worker that dies interrupts only its task);
                           default 0: in this process. See docs/workers.md

Keys come from the environment: ANTHROPIC_API_KEY, OPENAI_API_KEY. Tool processes never see
them, and known key shapes are redacted from tool output.
The Bash sandbox (bubblewrap, Linux) is set in ~/.keel/settings.json: "sandbox": {"enabled": true,
"network": {"allowedDomains": ["github.com"]}}; a project's settings can only tighten it.
Exit status: 0 when the task completes, 1 when it fails or is cancelled, 2 on bad usage (one
line on stderr saying what is wrong), 3 when the storage folder cannot record the run.
`;

export const MACHINES_HELP = `Usage: keel machines [--json]
Prints every state machine of Keel with its states (and, with --json, its transitions), derived
from the machine definitions themselves.
`;

export const BATCH_HELP = `Usage: keel batch FILE [run options] [--workers N]
Runs one task per line of FILE in parallel, each on a worker process of a pool of N (default 2).
A line is a prompt, or a JSON object {"prompt": "...", "mode": "acceptEdits"}; empty lines and
lines starting with # are skipped. Every event is printed as one JSON line tagged with the task's
line number ({"line": 3, "type": "text", ...}); {"type": "worker", "line", "taskId", "workerId",
"pid"} says which worker runs a task. A summary table goes to stderr at the end.
Exit status: 0 when every task completed, 1 when any did not, 2 on bad usage.
`;
