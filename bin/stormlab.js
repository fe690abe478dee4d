#!/usr/bin/env node
// Starts the CLI from the compiled package (npm install builds it: see "prepare").
import { main } from '../dist/cli/main.js';

const code = await main(process.argv.slice(2));
process.exitCode = code;
// Done is done: nothing a command left open (a socket, a timer) keeps the process alive. The
// empty writes wait until what was written before them is flushed, so no output is cut short.
process.stdout.write('', () => process.stderr.write('', () => process.exit(code)));
