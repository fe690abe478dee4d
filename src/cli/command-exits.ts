import { exitHelp, type ExitName } from './io.js';

/**
 * The exit codes each command can end with: its --help lists them (`commandExitHelp`) and
 * README's "Exit codes" table names the commands of each code; a test holds all three together.
 */
export const COMMAND_EXITS = {
  run: ['ok', 'failed', 'usage', 'noTarget', 'internal', 'interrupted', 'brokenPipe', 'terminated'],
  compare: ['ok', 'failed', 'usage', 'noTarget', 'internal', 'interrupted', 'brokenPipe', 'terminated'],
  sweep: ['ok', 'usage', 'internal', 'interrupted', 'brokenPipe', 'terminated'],
  tune: ['ok', 'failed', 'usage', 'internal', 'interrupted', 'brokenPipe', 'terminated'],
  worker: ['ok', 'usage', 'internal'],
  report: ['ok', 'failed', 'usage', 'partial', 'internal'],
  diff: ['ok', 'failed', 'usage', 'partial', 'internal'],
  calibrate: ['ok', 'usage', 'internal'],
  serve: ['ok', 'usage', 'internal', 'interrupted', 'brokenPipe', 'terminated'],
  proxy: ['ok', 'usage', 'internal', 'interrupted', 'brokenPipe', 'terminated'],
  init: ['ok', 'usage', 'internal'],
  scenarios: ['ok', 'usage', 'internal'],
} as const satisfies Record<string, readonly ExitName[]>;

export type CommandName = keyof typeof COMMAND_EXITS;

/** The `Exit codes:` block of one command's --help, a code's meaning worded for it where given. */
export function commandExitHelp(command: CommandName, wording: Partial<Record<ExitName, string>> = {}): string {
  return exitHelp(COMMAND_EXITS[command], wording);
}
