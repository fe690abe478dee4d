import { nodeIo } from './node-io.js';
import { createProgram } from './program.js';

/** Entry point of `bin/stormlab.js`. */
export async function main(argv: string[]): Promise<number> {
  return createProgram(nodeIo()).run(argv);
}
