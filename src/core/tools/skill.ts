import * as z from 'zod/mini';
import { readContentFile } from '../commands/contentFiles';
import { parseFrontmatter } from '../commands/frontmatter';
import { described } from './described';
import type { Tool } from './types';

/**
 * The Skill tool (Claude Code's): loads one skill of the system prompt's list. Its permission
 * subject is a read of the skill's SKILL.md, so the Read rules, the mode and the workspace's
 * bounds decide it as they decide a Read (a skill outside the workspace asks where a Read there
 * would). It returns the instructions (the text after the frontmatter) and the skill's folder,
 * whose other files the model reads with Read — each through the same permission path.
 */
export interface SkillRef {
  name: string;
  description: string;
  dir: string;
  path: string;
  /** A workspace's skill: read without following links. */
  linkFree: boolean;
  /** The workspace it belongs to (the root of the no-link rule), when `linkFree`. */
  workspace?: string;
}

const inputSchema = z.object({
  skill: described(z.string().check(z.minLength(1), z.maxLength(100)), 'The name of the skill to load, as listed in <available_skills>'),
});
export type SkillInput = z.infer<typeof inputSchema>;

const description = [
  'Loads a skill: its instructions and the folder of its files.',
  'Call it with the name of one of the skills in <available_skills> when the request matches that skill, before doing the work;',
  'then follow the instructions it returns (read its other files with Read when they are referred to).',
].join(' ');

/** The Skill tool over `skills()` (read at every call: the host's approved list of the moment). */
export function createSkillTool(skills: () => readonly SkillRef[]): Tool<SkillInput> {
  const find = (name: string) => skills().find((s) => s.name === name);
  return {
    name: 'Skill',
    description,
    inputSchema,
    readOnly: true,
    subject(input) {
      const s = find(input.skill);
      return { kind: 'read', tool: 'Skill', paths: s ? [s.path] : [], summary: `Load the skill ${input.skill}` };
    },
    async invoke(input) {
      const s = find(input.skill);
      if (!s) {
        const names = skills().map((x) => x.name);
        const available = names.length ? `Available: ${names.join(', ')}.` : 'No skills are available here.';
        return { content: `There is no skill named "${input.skill}". ${available}`, isError: true, summary: `no skill ${input.skill}` };
      }
      const read = readContentFile({ dir: s.dir, linkFreeFrom: s.linkFree ? (s.workspace ?? s.dir) : null }, s.path);
      if (!read.ok) return { content: `The skill ${s.name} could not be loaded: ${read.problem}`, isError: true, summary: `could not load ${s.name}` };
      const body = parseFrontmatter(read.text).body.trim();
      return {
        content: `Base directory for this skill: ${s.dir}\n\n${body}`,
        isError: false,
        summary: `Loaded the skill ${s.name}`,
      };
    },
  };
}
