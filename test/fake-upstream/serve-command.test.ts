import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROUTES, routeLines, startServe, serveCommand } from '../../src/cli/commands/serve.js';
import { EXIT } from '../../src/cli/io.js';
import { createProgram } from '../../src/cli/program.js';
import { captureIo, cli } from '../cli/capture-io.js';
import { json } from './harness.js';

const LISTENING = /^stormlab fake upstream listening on (http:\/\/127\.0\.0\.1:\d+)$/m;

describe('stormlab serve', () => {
  it('starts the default upstream (primary, secondary), says where and what it serves', async () => {
    const io = captureIo();
    const server = await startServe(io, { port: '0' });
    try {
      expect(io.out.split('\n')[0]).toBe(`stormlab fake upstream listening on ${server.url}`);
      expect(io.out).toContain('models: primary, secondary; other names are served by primary\n');
      expect(io.out).toContain('tools: 1 tool turn(s) before the answer, 1 call(s) a turn\n');
      expect(io.out).toContain('faults: none\n');
      for (const route of [
        'POST /v1/chat/completions',
        'POST /v1/messages',
        'POST /v1/responses',
        'POST /v1/embeddings',
        'GET  /v1/models',
        'GET  /_stormlab/requests',
        'GET  /_stormlab/stats',
        'PUT  /_stormlab/faults',
        'POST /_stormlab/reset',
        'GET  /metrics',
      ]) {
        expect(io.out).toContain(`  ${route}`);
      }
      expect(io.out).toContain(`baseURL: '${server.url}/v1'`);
      const models = await json(fetch(`${server.url}/v1/models`));
      expect(models.data.map((m: { id: string }) => m.id)).toEqual(['primary', 'secondary']);
      const res = await fetch(`${server.url}/v1/chat/completions`, {
        method: 'POST',
        body: JSON.stringify({ model: 'secondary', messages: [{ role: 'user', content: 'hi' }], max_tokens: 1 }),
      });
      expect(res.status).toBe(200);
      expect(res.headers.get('x-ratelimit-limit-requests')).toBe('100000');
    } finally {
      await server.close();
    }
  });

  it('takes the models and faults from --scenario (a bundled name works)', async () => {
    const io = captureIo();
    const server = await startServe(io, { port: '0', scenario: 'retry-storm' });
    try {
      expect(io.out).toContain('models: primary (from retry-storm); other names are served by primary\n');
      expect(io.out).toMatch(/faults: outage 0s–180s status 503\n/);
      const res = await fetch(`${server.url}/v1/chat/completions`, {
        method: 'POST',
        body: JSON.stringify({ model: 'primary', messages: [{ role: 'user', content: 'hi' }] }),
      });
      expect(res.status).toBe(503);
    } finally {
      await server.close();
    }
  });

  it('--answer-tokens sets every model’s answer length: n tokens (at most max_tokens), or max_tokens exactly', async () => {
    const ask = async (answerTokens: string, max_tokens: number) => {
      const server = await startServe(captureIo(), { port: '0', answerTokens });
      try {
        const res = await fetch(`${server.url}/v1/chat/completions`, {
          method: 'POST',
          body: JSON.stringify({ model: 'secondary', messages: [{ role: 'user', content: 'hi' }], max_tokens }),
        });
        const body = (await res.json()) as {
          usage: { completion_tokens: number };
          choices: Array<{ finish_reason: string }>;
        };
        return [body.usage.completion_tokens, body.choices[0].finish_reason];
      } finally {
        await server.close();
      }
    };
    expect(await ask('9', 4096)).toEqual([9, 'stop']);
    const io = captureIo();
    await (await startServe(io, { port: '0' })).close();
    expect(io.out).toContain(
      'answers: a natural length (median 300 tokens), cut at max_tokens (finish_reason length); header x-stormlab-output-tokens: max for exactly max_tokens\n',
    );
    expect(await ask('max', 3)).toEqual([3, 'stop']);
  });

  it('--stored-responses sets how many Responses answers are kept; the banner says it', async () => {
    const io = captureIo();
    const server = await startServe(io, { port: '0', storedResponses: '1' });
    try {
      expect(server.storedResponses).toBe(1);
      expect(io.out).toContain(
        'responses: the last 1 stored are kept for previous_response_id and GET /v1/responses/ID; older ids get 400\n',
      );
      const ids: string[] = [];
      for (const input of ['a', 'b']) {
        const res = await fetch(`${server.url}/v1/responses`, {
          method: 'POST',
          body: JSON.stringify({ model: 'm', input, max_output_tokens: 16 }),
        });
        ids.push(((await res.json()) as { id: string }).id);
      }
      const statuses = await Promise.all(
        ids.map(async (id) => (await fetch(`${server.url}/v1/responses/${id}`)).status),
      );
      expect(statuses).toEqual([404, 200]);
    } finally {
      await server.close();
    }
    const plain = captureIo();
    await (await startServe(plain, { port: '0' })).close();
    expect(plain.out).toContain('responses: the last 1000 stored');
    expect((await cli(['serve', '--help'])).out).toMatch(/--stored-responses <n>[\s\S]*\(default 1000\)/);
  });

  it('--models adds models and aliases, --strict-models 404s other names, --tool-rounds sets the policy, --log writes JSONL', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'stormlab-serve-'));
    const io = captureIo();
    io.cwd = dir;
    const server = await startServe(io, {
      port: '0',
      models: 'gpt-4o-mini,claude-3-5-haiku-latest=secondary',
      strictModels: true,
      toolRounds: '2',
      parallelTools: '3',
      seed: '4',
      log: 'requests.jsonl',
    });
    try {
      expect(io.out).toContain(
        'models: primary, secondary, gpt-4o-mini (aliases: claude-3-5-haiku-latest=secondary); other names get 404\n',
      );
      expect(io.out).toContain(
        'tools: 2 tool turn(s) before the answer, 3 call(s) a turn; request log: requests.jsonl\n',
      );
      const ask = (model: string) =>
        fetch(`${server.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { 'x-stainless-retry-count': '1' },
          body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }], max_tokens: 1 }),
        });
      expect((await ask('gpt-4o-mini')).status).toBe(200);
      expect((await ask('claude-3-5-haiku-latest')).status).toBe(200);
      expect((await ask('other')).status).toBe(404);
      expect(server.stats().models.map((m) => [m.name, m.attempts])).toEqual([
        ['primary', 0],
        ['secondary', 1],
        ['gpt-4o-mini', 1],
      ]);
    } finally {
      await server.close();
    }
    const lines = readFileSync(join(dir, 'requests.jsonl'), 'utf8')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.map((l) => [l.model, l.status, l.retryCount])).toEqual([
      ['gpt-4o-mini', 200, 1],
      ['claude-3-5-haiku-latest', 200, 1],
      ['other', 404, 1],
    ]);
  });

  it('takes aliases and the tool policy from a scenario; a bad alias there is one line naming the file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'stormlab-serve-'));
    const bundled = readFileSync(new URL('../../scenarios/retry-storm.yaml', import.meta.url), 'utf8');
    const withTools = bundled.replace(
      'upstream:\n',
      'upstream:\n  aliases: { gpt-4o-mini: primary }\n  toolPolicy: { rounds: 3, parallel: 2 }\n',
    );
    writeFileSync(join(dir, 'tools.yaml'), withTools);
    const io = captureIo();
    io.cwd = dir;
    const server = await startServe(io, { port: '0', scenario: 'tools.yaml' });
    try {
      expect(server.toolPolicy()).toEqual({ rounds: 3, parallel: 2, pick: 'cycle' });
      expect(io.out).toContain('(aliases: gpt-4o-mini=primary)');
    } finally {
      await server.close();
    }
    writeFileSync(
      join(dir, 'bad.yaml'),
      bundled.replace('upstream:\n', 'upstream:\n  aliases: { gpt-4o-mini: nope }\n'),
    );
    await expect(startServe(captureIo({ cwd: dir }), { port: '0', scenario: 'bad.yaml' })).rejects.toThrow(
      'bad.yaml: upstream.models: alias "gpt-4o-mini" points at "nope", which is not a model (primary)',
    );
    writeFileSync(
      join(dir, 'range.yaml'),
      bundled.replace('upstream:\n', 'upstream:\n  toolPolicy: { rounds: 500 }\n'),
    );
    const r = await cli(['serve', '--port', '0', '--scenario', join(dir, 'range.yaml')]);
    expect(r.code).toBe(EXIT.usage);
    expect(r.err).toMatch(/upstream\.toolPolicy\.rounds.*an integer from 0 to 100/);
  });

  it('runs until SIGINT, then closes cleanly and exits 130, as a shell reports the signal', async () => {
    const io = captureIo();
    let stop!: (why: string) => void;
    const done = serveCommand(io, { port: '0' }, new Promise((resolve) => (stop = resolve)));
    while (!LISTENING.test(io.out)) await new Promise((r) => setImmediate(r));
    const url = LISTENING.exec(io.out)![1];
    expect((await fetch(`${url}/_stormlab/stats`)).status).toBe(200);
    stop('SIGINT');
    expect(await done).toBe(EXIT.interrupted);
    expect(io.out).toMatch(/stopping \(SIGINT\)\n$/);
    await expect(fetch(`${url}/_stormlab/stats`)).rejects.toThrow();
  });

  it('stops without a signal to report (its caller’s promise): exits 0', async () => {
    const io = captureIo();
    let stop!: () => void;
    const done = serveCommand(io, { port: '0' }, new Promise<void>((resolve) => (stop = resolve)));
    while (!LISTENING.test(io.out)) await new Promise((r) => setImmediate(r));
    stop();
    expect(await done).toBe(EXIT.ok);
    expect(io.out).toMatch(/stopping\n$/);
  });

  it('--headers-timeout and --idle-timeout set the connection limits, and the banner says them (defaults 10s, 5s)', async () => {
    const io = captureIo();
    const server = await startServe(io, { port: '0', headersTimeout: '2s', idleTimeout: '750ms' });
    await server.close();
    expect(server.timeouts).toEqual({ headersTimeoutMs: 2000, idleTimeoutMs: 750 });
    expect(io.out).toContain(
      "connections: headers due 2s after a request's first byte (else 408), closed after 750ms idle\n",
    );
    const plain = captureIo();
    await (await startServe(plain, { port: '0' })).close();
    expect(plain.out).toContain(
      "connections: headers due 10s after a request's first byte (else 408), closed after 5s idle\n",
    );
    const help = await cli(['serve', '--help']);
    expect(help.out).toMatch(/--headers-timeout <duration>[\s\S]*\(default 10s\)/);
    expect(help.out).toMatch(/--idle-timeout <duration>[\s\S]*\(default 5s\)/);
  });

  it('banner: every route stands apart from what it does, by two spaces at least, in one column', async () => {
    const io = captureIo();
    await (await startServe(io, { port: '0' })).close();
    const lines = io.out.split('\n').filter((l) => /^ {2}(GET|PUT|POST|DELETE) /.test(l));
    expect(lines).toHaveLength(ROUTES.length);
    const starts = new Set<number>();
    for (const [i, [route, what]] of ROUTES.entries()) {
      const line = lines[i];
      expect(line.startsWith(`  ${route}  `), line).toBe(true);
      expect(line.endsWith(what), line).toBe(true);
      starts.add(line.length - what.length);
    }
    expect(starts.size).toBe(1);
    // The longest route (the one that ran into its text) is followed by exactly two spaces.
    expect(io.out).toContain('  PUT  /_stormlab/tool-policy  how the model uses tools');
    expect(
      routeLines([
        ['GET /a', 'x'],
        ['POST /a-much-longer-route', 'y'],
      ]),
    ).toEqual([`  GET /a${' '.repeat(21)}x`, '  POST /a-much-longer-route  y']);
  });

  it('stops on the signal io.onStop reports, through the program: SIGTERM exits 143', async () => {
    const io = captureIo();
    let registered!: (fn: (signal: string) => void) => void;
    const onStop = new Promise<(signal: string) => void>((resolve) => (registered = resolve));
    io.onStop = (fn) => {
      registered(fn);
      return () => {};
    };
    const run = createProgram(io).run(['serve', '--port', '0']);
    (await onStop)('SIGTERM');
    expect(await run).toBe(EXIT.terminated);
    expect(io.out).toMatch(LISTENING);
    expect(io.out).toContain('stopping (SIGTERM)');
  });

  it.each([
    [['--port', 'http'], 'stormlab: --port: expected a port from 0 to 65535 (0 picks a free one), got "http"'],
    [['--port', '70000'], 'stormlab: --port: expected a port from 0 to 65535 (0 picks a free one), got "70000"'],
    [['--host', ''], 'stormlab: --host: expected an address like 127.0.0.1 or 0.0.0.0, got ""'],
    [['--scenario', 'no-such.yaml', '--port', '0'], /^no-such\.yaml: /],
    [['--models', 'a,,b'], /^stormlab: --models: expected names separated by commas/],
    [['--models', 'x=nope'], 'stormlab: --models: alias x=nope points at no model (models: primary, secondary)'],
    [['--models', 'a=b=c'], 'stormlab: --models: "a=b=c" is not a model name or alias=model'],
    [['--tool-rounds', 'two'], 'stormlab: --tool-rounds: expected a whole number, got "two"'],
    [['--tool-rounds', '500'], 'stormlab: --tool-rounds: expected an integer from 0 to 100, got 500'],
    [['--parallel-tools', '0'], 'stormlab: --parallel-tools: expected an integer from 1 to 16, got 0'],
    [['--log', '/no/such/dir/log.jsonl'], 'stormlab: --log: cannot write /no/such/dir/log.jsonl: ENOENT'],
    [['--answer-tokens', 'lots'], 'stormlab: --answer-tokens: expected a whole number or max, got "lots"'],
    [['--stored-responses', '0'], 'stormlab: --stored-responses: expected a whole number from 1 to 1000000, got "0"'],
    [
      ['--stored-responses', 'many'],
      'stormlab: --stored-responses: expected a whole number from 1 to 1000000, got "many"',
    ],
    [
      ['--headers-timeout', '10'],
      'stormlab: --headers-timeout: expected a duration above 0 with a unit, like 10s or 500ms, got "10"',
    ],
    [
      ['--idle-timeout', '0s'],
      'stormlab: --idle-timeout: expected a duration above 0 with a unit, like 10s or 500ms, got "0s"',
    ],
    [
      ['--idle-timeout', 'soon'],
      'stormlab: --idle-timeout: expected a duration above 0 with a unit, like 10s or 500ms, got "soon"',
    ],
  ])('exits 2 with one line for bad input: %j', async (args, message) => {
    const r = await cli(['serve', ...args]);
    expect(r.code).toBe(EXIT.usage);
    expect(r.err.trimEnd().split('\n')).toHaveLength(1);
    if (typeof message === 'string') expect(r.err).toBe(`${message}\n`);
    else expect(r.err).toMatch(message);
  });

  it('exits 2 when the port is taken', async () => {
    const other = createServer();
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    const port = (other.address() as { port: number }).port;
    try {
      const r = await cli(['serve', '--port', String(port)]);
      expect(r.code).toBe(EXIT.usage);
      expect(r.err).toBe(`stormlab: cannot listen on 127.0.0.1:${port}: the port is already in use\n`);
    } finally {
      other.close();
    }
  });

  it('is listed in the help', async () => {
    const r = await cli(['--help']);
    expect(r.out).toMatch(/serve \[options\]\s+start the fake LLM upstream/);
  });
});
