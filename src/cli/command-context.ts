import type { Io } from './io.js';

/** What each part of the program's definition gets: the outside world, and where an action leaves its exit code. */
export interface CommandContext {
  io: Io;
  exit(code: number): void;
}

/** Commander's accumulator for a repeatable option. */
export const collect = (value: string, previous: string[] = []): string[] => [...previous, value];
