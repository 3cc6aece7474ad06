import { DEMO_MODEL_LABEL } from '../../shared/domain/models';
import {
  nextTourStep,
  TOUR_COMMAND,
  TOUR_FILE,
  TOUR_ID_PREFIX,
  TOUR_NOTE_FILE,
  textOfRead,
  type Outcome,
  type TourStep,
} from './demoTour';
import { ScriptedProvider } from './scripted';
import type { ScriptedBlock, ScriptedTurn } from './scripted';
import type { ProviderRequest } from './types';

/**
 * The `demo` provider: a scripted tour of Keel that needs no key and no network. It is an
 * ordinary ModelProvider: each request's conversation decides the next step (demoTour.ts), and
 * the step streams through the same provider grammar as a real model's answer — text, a
 * thinking block, tool calls — so Keel's machines, permission prompts, tool cards and diffs do
 * for it exactly what they do for a real model.
 */

const QUOTE_LIMIT = 160;
const NOTE_TEXT = "# Keel demo\n\nKeel's demo model wrote this file during its tour, after you allowed it.\nDelete it whenever you like.\n";

/** Advice that holds in VS Code and in the CLI alike (the demo does not know where it runs). */
const REAL_MODEL_ADVICE =
  'To work with a real model, give Keel an Anthropic API key — **Keel: Set API Key** in VS Code, or `ANTHROPIC_API_KEY` with ' +
  '`keel run --provider anthropic` — or point it at an OpenAI-compatible server such as Ollama.';

let idCounter = 0;
function toolId(step: string): string {
  idCounter += 1;
  return `${TOUR_ID_PREFIX}${step}_${Date.now().toString(36)}${idCounter.toString(36)}`;
}

function quote(s: string): string {
  const one = s.replace(/\s+/g, ' ').trim();
  return `“${one.length > QUOTE_LIMIT ? `${one.slice(0, QUOTE_LIMIT)}…` : one}”`;
}

function firstLine(s: string): string {
  const line = s.split('\n').find((l) => l.trim()) ?? '';
  return line.length > 120 ? `${line.slice(0, 120)}…` : line.trim();
}

function changedFile(tool: 'Edit' | 'Write'): string {
  return tool === 'Write' ? TOUR_NOTE_FILE : TOUR_FILE;
}

/** One sentence on what became of the change (the Edit, or the Write of the note). */
function changeSentence(o: Outcome, tool: 'Edit' | 'Write'): string {
  const file = `\`${changedFile(tool)}\``;
  const what = tool === 'Write' ? 'writing the note' : 'the edit';
  switch (o.status) {
    case 'done': {
      if (tool === 'Write') return `${file} is written.`;
      const region = editedRegion(o.detail);
      return region ? `The edit is in. Keel's Edit tool answered with the lines as they now read:\n\n\`\`\`ts\n${region}\`\`\`` : `The edit is in: ${file} changed, exactly as the diff showed.`;
    }
    case 'denied':
      return `${cap(what)} was denied${o.detail ? ` (${quote(o.detail)})` : ''}, so ${file} is unchanged. Keel handed me that answer as the tool's result — which is how a real model learns it too.`;
    case 'refused':
    case 'refusedByPlan':
      return `Keel refused ${what}: ${o.detail || 'not allowed'}. ${file} is unchanged.`;
    case 'failed':
      return `${cap(what)} failed: ${firstLine(o.detail)}`;
    case 'interrupted':
      return `${cap(what)} did not finish.`;
  }
}

/** The region an Edit result quotes ("The edited region now reads:" and numbered lines), without the numbers. */
function editedRegion(result: string): string | null {
  const at = result.indexOf('The edited region now reads:\n');
  const text = at < 0 ? null : textOfRead(result.slice(at + 'The edited region now reads:\n'.length));
  return text ? `${text.replace(/^\s*\n/, '').trimEnd()}\n` : null;
}

/** One sentence on what became of the command. */
function commandSentence(o: Outcome): string {
  switch (o.status) {
    case 'done':
      return `The command ran and printed \`${firstLine(o.detail) || '(nothing)'}\`.`;
    case 'denied':
      return `The command was denied${o.detail ? ` (${quote(o.detail)})` : ''}, so it did not run.`;
    case 'refused':
    case 'refusedByPlan':
      return `Keel refused the command: ${o.detail || 'not allowed'}. It did not run.`;
    case 'failed':
      return `The command ran but failed: ${firstLine(o.detail)}`;
    case 'interrupted':
      return 'The command did not finish.';
  }
}

function cap(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

const ASKS_FIRST = 'Keel asks you first: look at the diff on the card (in VS Code the diff editor opens too), then **Allow** or **Deny**.';

/** The blocks of one step of the tour. */
export function tourBlocks(step: TourStep): ScriptedBlock[] {
  switch (step.kind) {
    case 'intro': {
      const asked = step.prompt ? `You asked ${quote(step.prompt)}. I can't really work on that, but` : 'You have not asked anything yet, so';
      const text = step.restart
        ? `Here is the tour again. First I read \`${TOUR_FILE}\`:`
        : [
            `Hi! I'm Keel's **${DEMO_MODEL_LABEL}**: a scripted tour that runs inside Keel, with no API key and no network. ${asked} I can show you what Keel does with a real model:`,
            '',
            '1. read a file,',
            '2. propose an edit — you decide: **Allow** or **Deny**,',
            '3. run a harmless command — you decide again,',
            '4. explain what happened.',
            '',
            `First I read \`${TOUR_FILE}\` (reading inside the workspace needs no permission):`,
          ].join('\n');
      return [
        { type: 'thinking', thinking: `The person wants to see what Keel does. The sample workspace has ${TOUR_FILE}; I will read it, propose a small edit, then run a harmless command.` },
        { type: 'text', text },
        { type: 'tool_use', id: toolId('read'), name: 'Read', input: { file_path: TOUR_FILE } },
      ];
    }
    case 'edit': {
      const e = step.edit;
      const text =
        e.direction === 'add'
          ? `\`${TOUR_FILE}\` has ${step.lines} lines. Its \`greet()\` keeps the spaces around a name: \`greet('  Ada ')\` says “Hello,   Ada !”. I'll fix that with an **Edit**. ${ASKS_FIRST}`
          : `\`${TOUR_FILE}\` already trims names — an earlier tour changed it. This time I'll propose taking that change out again, with an **Edit**. ${ASKS_FIRST}`;
      return [
        { type: 'text', text },
        { type: 'tool_use', id: toolId('edit'), name: 'Edit', input: { file_path: e.path, old_string: e.oldString, new_string: e.newString } },
      ];
    }
    case 'write': {
      const why =
        step.read.status === 'done'
          ? `\`${TOUR_FILE}\` is here, but it is not the sample workspace's, so I'll leave it alone.`
          : `This workspace has no \`${TOUR_FILE}\` (the sample workspace that \`npm start\` opens has one).`;
      return [
        { type: 'text', text: `${why} I'll show the same thing with a new file instead: a short note, \`${TOUR_NOTE_FILE}\`, created with **Write**. ${ASKS_FIRST}` },
        { type: 'tool_use', id: toolId('write'), name: 'Write', input: { file_path: TOUR_NOTE_FILE, content: NOTE_TEXT } },
      ];
    }
    case 'command':
      return [
        {
          type: 'text',
          text:
            `${changeSentence(step.change, step.changeTool)}\n\nNext, a command. \`${TOUR_COMMAND}\` only prints Node's version, ` +
            'but running a command is something Keel asks about first (it is not one of the read-only commands). **Allow** or **Deny** it:',
        },
        { type: 'tool_use', id: toolId('bash'), name: 'Bash', input: { command: TOUR_COMMAND, description: "Print Node's version" } },
      ];
    case 'wrapUp':
      return [{ type: 'text', text: wrapUpText(step) }];
    case 'planStop':
      return [{ type: 'text', text: planStopText(step.changeTool) }];
    case 'followUp':
      return [
        {
          type: 'text',
          text: `I'm only the **${DEMO_MODEL_LABEL}** — a scripted tour, not a real model — so I can't answer ${quote(step.prompt)}. Say **tour** to see the tour again.\n\n${REAL_MODEL_ADVICE}`,
        },
      ];
  }
}

function wrapUpText(step: Extract<TourStep, { kind: 'wrapUp' }>): string {
  const file = `\`${changedFile(step.changeTool)}\``;
  const change =
    step.change.status === 'done' ? 'allowed, so the file changed' : step.change.status === 'denied' ? 'denied, so nothing changed' : 'not done (see above)';
  const command =
    step.command.status === 'done' ? 'allowed, so it ran' : step.command.status === 'denied' ? 'denied, so it never ran' : 'did not run to the end';
  return [
    commandSentence(step.command),
    '',
    "That's the tour. What happened:",
    '',
    `- **Read** \`${TOUR_FILE}\` ran without asking: reading inside the workspace is allowed${step.changeTool === 'Write' ? ' (it showed this is not the sample workspace)' : ''}.`,
    `- **${step.changeTool}** ${file}: ${change}.`,
    `- **Bash** \`${TOUR_COMMAND}\`: ${command}.`,
    '',
    "Each step went the way a real model's does: the answer streamed in, every tool call was checked against your permission rules and mode " +
      '(and asked you when they said so), and every event was recorded, so this task can be reopened from the history and resumed.',
    '',
    `${REAL_MODEL_ADVICE} Say **tour** to see this again, or switch to **Plan** mode first: there the edit is refused.`,
  ].join('\n');
}

function planStopText(tool: 'Edit' | 'Write'): string {
  const plan =
    tool === 'Edit'
      ? [`1. Trim the name at the start of \`greet()\` in \`${TOUR_FILE}\`, so \`greet('  Ada ')\` says “Hello, Ada!”.`, '2. Add a test for it to `src/greet.test.ts`.', '3. Run the tests.']
      : [`1. Write a short note, \`${TOUR_NOTE_FILE}\`.`, `2. Run \`${TOUR_COMMAND}\`.`];
  return [
    `Keel refused the ${tool === 'Edit' ? 'edit' : 'note'}: this task is in **Plan** mode, where Keel only reads and plans — no file changes, ` +
      `no commands. \`${changedFile(tool)}\` is unchanged, and I'll stop here instead of running the command.`,
    '',
    'In Plan mode a real model ends with a plan, like this one:',
    '',
    ...plan,
    '',
    'Switch the mode to **Ask before edits** (in the CLI: `--mode default`) and say **tour** to watch the edit and the command.',
  ].join('\n');
}

/** The demo model's answer to a request: the next step of the tour, as a scripted turn. */
export function demoAnswer(request: ProviderRequest): ScriptedTurn {
  const blocks = tourBlocks(nextTourStep(request.messages));
  const said = JSON.stringify(request.messages).length + request.system.join('').length;
  const wrote = blocks.reduce((n, b) => n + (b.type === 'text' ? b.text.length : b.type === 'thinking' ? b.thinking.length : JSON.stringify(b.input).length), 0);
  return {
    blocks,
    chunkSize: 8,
    delayMs: 12,
    usage: { input_tokens: Math.ceil(said / 4), output_tokens: Math.ceil(wrote / 4) },
    model: DEMO_MODEL_LABEL,
  };
}

/** The `demo` provider: the scripted provider answering every request with {@link demoAnswer}. */
export function createDemoProvider(opts: { delayMs?: number } = {}): ScriptedProvider {
  return new ScriptedProvider(
    (request) => {
      const turn = demoAnswer(request);
      return opts.delayMs === undefined ? turn : { ...turn, delayMs: opts.delayMs };
    },
    { id: 'demo', label: DEMO_MODEL_LABEL },
  );
}
