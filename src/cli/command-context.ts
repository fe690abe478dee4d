import type { Io } from './io.js';

/** What each part of the program's definition gets: the outside world, and where an action leaves its exit code. */
export interface CommandContext {
  io: Io;
  exit(code: number): void;
}

/** Commander's accumulator for a repeatable option. */
export const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

/**
 * The one order every scenario is resolved in, as --help says it: the file, then the variant's
 * overrides, then the command line's (which win).
 */
export const PRECEDENCE =
  "Precedence: the scenario file, then the variant's overrides, then the command line's\n" +
  '(--set in order, then --duration and --seed): the command line wins. The summary and the\n' +
  'JSON ("effective") say what ran.';
