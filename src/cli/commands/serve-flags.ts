import { closeSync, constants, openSync, writeSync } from 'node:fs';
import { resolve } from 'node:path';
import { OptionError } from '../../engine/errors.js';
import type { RequestLogEntry } from '../../fake-upstream/request-log.js';
import { STORED_RESPONSES } from '../../fake-upstream/response-store.js';
import type { FakeUpstreamConfig } from '../../fake-upstream/server.js';
import { parseToolPolicy, type ToolPolicy } from '../../fake-upstream/tool-policy.js';
import { parseDuration } from '../../upstream/duration.js';
import { UsageError } from '../io.js';

/** `stormlab serve` flags beyond where it listens. */
export interface ServeModelFlags {
  models?: string;
  strictModels?: boolean;
  toolRounds?: string;
  parallelTools?: string;
  seed?: string;
  log?: string;
  answerTokens?: string;
  headersTimeout?: string;
  idleTimeout?: string;
  storedResponses?: string;
}

const NAME = /^[A-Za-z0-9][\w.:/@-]*$/;

/**
 * `--models a,b,alias=target`: a bare name is a model of its own (a copy of the first model, so
 * traffic to it is counted and faulted apart), `alias=target` another name for a model. Names
 * the flag does not give are still served by the first model unless `--strict-models`.
 */
export function applyModels(upstream: FakeUpstreamConfig, raw: string | undefined): FakeUpstreamConfig {
  if (raw === undefined) return upstream;
  const models = [...upstream.models];
  const aliases: Record<string, string> = { ...upstream.aliases };
  const items = raw.split(',').map((s) => s.trim());
  if (items.some((s) => s === ''))
    throw new UsageError(
      `--models: expected names separated by commas, like gpt-4o-mini,claude-3-5-haiku-latest, got "${raw}"`,
    );
  const fresh: typeof models = [];
  for (const item of items) {
    const [name, target, extra] = item.split('=');
    if (extra !== undefined || !NAME.test(name) || (target !== undefined && !NAME.test(target)))
      throw new UsageError(`--models: "${item}" is not a model name or alias=model`);
    if (target !== undefined) aliases[name] = target;
    else if (!fresh.some((m) => m.name === name)) fresh.push({ ...upstream.models[0], name });
  }
  // The configured models stay (the first still serves unknown names); the named ones join them.
  const all = [...models, ...fresh.filter((f) => !models.some((m) => m.name === f.name))];
  const known = new Set(all.map((m) => m.name));
  for (const [alias, target] of Object.entries(aliases))
    if (!known.has(target))
      throw new UsageError(`--models: alias ${alias}=${target} points at no model (models: ${[...known].join(', ')})`);
  return { ...upstream, models: all, aliases };
}

/** `--answer-tokens N|max`: every model's answers run N tokens (at most max_tokens), or max_tokens exactly. */
export function applyAnswerTokens(upstream: FakeUpstreamConfig, raw: string | undefined): FakeUpstreamConfig {
  if (raw === undefined) return upstream;
  const answerTokens = raw.trim() === 'max' ? 'max' : integer('--answer-tokens', raw, 'a whole number or max');
  return { ...upstream, models: upstream.models.map((m) => ({ ...m, answerTokens })) };
}

export function toolPolicyOf(flags: ServeModelFlags): Partial<ToolPolicy> {
  const p: Record<string, number> = {};
  if (flags.toolRounds !== undefined) p.rounds = integer('--tool-rounds', flags.toolRounds);
  if (flags.parallelTools !== undefined) p.parallel = integer('--parallel-tools', flags.parallelTools);
  try {
    parseToolPolicy(p);
    // Only the fields given: a scenario's tool policy keeps the others.
    return p;
  } catch (e) {
    if (!(e instanceof OptionError)) throw e;
    const flag = e.message.includes('.rounds') ? '--tool-rounds' : '--parallel-tools';
    throw new UsageError(`${flag}: ${e.message.replace(/^toolPolicy\.\w+: /, '')}`);
  }
}

export function seedOf(raw: string | undefined): number | undefined {
  return raw === undefined ? undefined : integer('--seed', raw);
}

/** `--stored-responses N`: how many Responses answers are kept (undefined: the server's default). */
export function storedResponsesOf(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const { min, max } = STORED_RESPONSES;
  const n = integer('--stored-responses', raw, `a whole number from ${min} to ${max}`);
  if (n < min || n > max)
    throw new UsageError(
      `--stored-responses: expected a whole number from ${min} to ${max}, got ${JSON.stringify(raw)}`,
    );
  return n;
}

/** Opens `--log FILE` for appending now (a bad path fails before the server starts) and writes one JSON line per request. */
export function requestLogFile(
  file: string | undefined,
  cwd: string,
): { write(e: RequestLogEntry): void; close(): void } | undefined {
  if (file === undefined) return undefined;
  let fd: number;
  const path = resolve(cwd, file);
  try {
    // A fifo no process reads would hold a plain open for ever: a first open that does not
    // block says so (ENXIO); one that works (a file, /dev/stdout, a pipe with its reader) is
    // closed, and the log opened as usual, its writes blocking as a log's should.
    closeSync(openSync(path, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NONBLOCK));
    fd = openSync(path, 'a');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const why = code === 'ENXIO' ? 'it is a fifo no process reads' : (code ?? String(e));
    throw new UsageError(`--log: cannot write ${file}: ${why}`);
  }
  let open = true;
  return {
    write: (e) => {
      if (open) writeSync(fd, `${JSON.stringify(e)}\n`);
    },
    close: () => {
      if (open) closeSync(fd);
      open = false;
    },
  };
}

function integer(flag: string, raw: string, what = 'a whole number'): number {
  if (!/^\s*\d+\s*$/.test(raw)) throw new UsageError(`${flag}: expected ${what}, got ${JSON.stringify(raw)}`);
  return Number(raw);
}

/**
 * `--headers-timeout` and `--idle-timeout`: durations with a unit above 0 (a bare number would
 * be ms, and `--idle-timeout 5` meaning 5 ms would cut every keep-alive connection).
 */
export function connectionTimeoutsOf(flags: ServeModelFlags): { headersTimeoutMs?: number; idleTimeoutMs?: number } {
  const ms = (flag: string, raw: string | undefined): number | undefined => {
    if (raw === undefined) return undefined;
    const n = parseDuration(raw);
    if (n === undefined || !(n > 0) || /^\s*[\d.]+\s*$/.test(raw))
      throw new UsageError(
        `${flag}: expected a duration above 0 with a unit, like 10s or 500ms, got ${JSON.stringify(raw)}`,
      );
    return n;
  };
  return {
    headersTimeoutMs: ms('--headers-timeout', flags.headersTimeout),
    idleTimeoutMs: ms('--idle-timeout', flags.idleTimeout),
  };
}
