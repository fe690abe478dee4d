import type { Command } from 'commander';
import { CONNECTION_TIMEOUT_DEFAULTS } from '../fake-upstream/connection-timeouts.js';
import { formatDuration } from '../upstream/duration.js';
import type { ServeFlags } from './commands/serve.js';
import { SERVE_DEFAULTS } from './commands/serve-defaults.js';
import type { CommandContext } from './command-context.js';
import { commandExitHelp } from './command-exits.js';

/** `stormlab serve`: the fake upstream. */
export function defineServe(program: Command, { io, exit }: CommandContext): void {
  program
    .command('serve')
    .description('start the fake LLM upstream (OpenAI- and Anthropic-compatible, faults and all) until Ctrl-C')
    .option('--port <n>', 'port to listen on (0 picks a free one)', SERVE_DEFAULTS.port)
    .option('--host <address>', 'address to listen on', SERVE_DEFAULTS.host)
    .option('--scenario <file>', 'take the models and fault phases from a scenario (a file or a bundled name)')
    .option('--models <names>', 'more models (a,b) and aliases (gpt-4o-mini=primary), comma-separated')
    .option('--strict-models', 'answer names no model or alias has with 404 (default: the first model serves them)')
    .option('--tool-rounds <n>', 'tool-calling turns before the model answers in text (default 1)')
    .option('--parallel-tools <n>', 'tool calls in one turn (default 1)')
    .option('--seed <n>', 'seed for tool-call arguments, structured outputs and answer lengths (default 0)')
    .option(
      '--answer-tokens <n|max>',
      'every answer runs n tokens (at most max_tokens), or max_tokens exactly (default: a natural length, median 300)',
    )
    .option(
      '--headers-timeout <duration>',
      `a request's headers must all come this long after its first byte, else 408 and the connection closes (default ${formatDuration(CONNECTION_TIMEOUT_DEFAULTS.headersTimeoutMs)})`,
    )
    .option(
      '--idle-timeout <duration>',
      `close a connection with no request in flight (new or kept alive) after this long without a byte (default ${formatDuration(CONNECTION_TIMEOUT_DEFAULTS.idleTimeoutMs)})`,
    )
    .option(
      '--log <file>',
      'append one JSON line per model request (route, model, retry count, status, fault, latency)',
    )
    .addHelpText('after', `\n${commandExitHelp('serve')}`)
    .action(async (flags: ServeFlags) => {
      const { serveCommand } = await import('./commands/serve.js');
      exit(await serveCommand(io, flags));
    });
}
