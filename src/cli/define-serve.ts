import type { Command } from 'commander';
import { CONNECTION_TIMEOUT_DEFAULTS } from '../fake-upstream/connection-timeouts.js';
import { STORED_RESPONSES } from '../fake-upstream/response-store.js';
import { formatDuration } from '../upstream/duration.js';
import type { ServeFlags } from './commands/serve.js';
import { PROXY_FLAG_DEFAULTS, SERVE_DEFAULTS } from './commands/serve-defaults.js';
import type { ProxyFlags } from './commands/proxy.js';
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
      '--stored-responses <n>',
      `Responses API answers kept for previous_response_id and GET /v1/responses/ID, least recently used out first (default ${STORED_RESPONSES.default})`,
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

/** `stormlab proxy`: the fault-injecting reverse proxy in front of a real server. */
export function defineProxy(program: Command, { io, exit }: CommandContext): void {
  program
    .command('proxy')
    .description(
      "put a fault-injecting proxy in front of any OpenAI- or Anthropic-compatible server (serve's faults and control API) until Ctrl-C",
    )
    .option('--upstream <url>', 'the server to proxy (required), e.g. http://127.0.0.1:11434')
    .option('--port <n>', 'port to listen on (0 picks a free one)', PROXY_FLAG_DEFAULTS.port)
    .option('--host <address>', 'address to listen on', PROXY_FLAG_DEFAULTS.host)
    .option('--scenario <file>', "take the fault phases from a scenario's upstream.faults (a file or a bundled name)")
    .option('--faults <file>', 'take the fault phases from a JSON file, as PUT /_stormlab/faults takes them')
    .option('--rpm <n>', "requests per minute per model; past it, 429 in the provider's shape")
    .option('--tpm <n>', "tokens per minute per model (an estimate reserved, then the upstream's usage); past it, 429")
    .option('--seed <n>', 'seed for fault draws (rates, statuses, added latencies); default: random')
    .option(
      '--log <file>',
      'append one JSON line per model request (route, model, retry count, status, fault, latency)',
    )
    .addHelpText('after', `\n${commandExitHelp('proxy')}`)
    .action(async (flags: ProxyFlags) => {
      const { proxyCommand } = await import('./commands/proxy.js');
      exit(await proxyCommand(io, flags));
    });
}
