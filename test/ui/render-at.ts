import { EventEmitter } from 'node:events';
import { render as inkRender } from 'ink';
import type { ReactElement } from 'react';

/** A fake terminal output of a given size that keeps the frames Ink writes. */
class Screen extends EventEmitter {
  readonly frames: string[] = [];
  readonly isTTY = true;
  constructor(
    readonly columns: number,
    readonly rows: number,
  ) {
    super();
  }
  write = (frame: string): boolean => {
    this.frames.push(frame);
    return true;
  };
}

class Keyboard extends EventEmitter {
  readonly isTTY = true;
  setEncoding(): void {}
  setRawMode(): void {}
  resume(): void {}
  pause(): void {}
  ref(): void {}
  unref(): void {}
  read = (): null => null;
}

/**
 * ink-testing-library's `render` on a terminal of `columns` × `rows` (its own is fixed at 100
 * columns, and Ink lays the root out at the terminal's width).
 */
export function renderAt(tree: ReactElement, columns: number, rows: number) {
  const stdout = new Screen(columns, rows);
  const instance = inkRender(tree, {
    stdout: stdout as unknown as NodeJS.WriteStream,
    stderr: new Screen(columns, rows) as unknown as NodeJS.WriteStream,
    stdin: new Keyboard() as unknown as NodeJS.ReadStream,
    debug: true,
    exitOnCtrlC: false,
    patchConsole: false,
  });
  return { lastFrame: () => stdout.frames.at(-1), unmount: () => instance.unmount(), rerender: instance.rerender };
}
