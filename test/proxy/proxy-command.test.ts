import { describe, expect, it } from 'vitest';
import { proxyCommand, startProxy } from '../../src/cli/commands/proxy.js';
import { EXIT } from '../../src/cli/io.js';
import { captureIo, cli, tempDir } from '../cli/capture-io.js';
import { serveUpstream } from './proxy-harness.js';

/** A scenario whose phase is a filtered 200 (`content-filter`, `mode: finish`): a body only serve can write. */
const FILTER_SCENARIO = `
name: filtered
duration: 10s
arrival: { type: constant, rate: 1 }
tokens: { prompt: 10, completion: 10 }
layers: [{ name: llm }]
upstream:
  faults: [{ kind: content-filter, mode: finish, from: 0s, to: 5s }]
  models: [{ name: primary, slots: 1, queue: 0, ttft: 10ms, tpot: 0 }]
`;

describe('stormlab proxy (the command)', () => {
  it('says where it listens, what it is in front of and its faults; takes phases from a file', async () => {
    const fu = await serveUpstream();
    const dir = tempDir({
      'faults.json': JSON.stringify([
        { kind: 'latency', addMs: '1s', toMs: 20000 },
        { kind: 'errors', status: 429, rate: 0.2 },
      ]),
    });
    const io = captureIo({ cwd: dir });
    const proxy = await startProxy(io, { upstream: fu.url, port: '0', faults: 'faults.json', rpm: '60' });
    try {
      expect(io.out.split('\n')[0]).toBe(`stormlab proxy listening on ${proxy.url}, in front of ${fu.url}`);
      expect(io.out).toContain('faults: latency 0s–20s; errors 0s–… rate 0.2 status 429 (from faults.json)\n');
      expect(io.out).toContain('limits per model: 60 requests/min\n');
      expect(io.out).toContain('  PUT  /_stormlab/faults');
      expect(proxy.faults()[0]).toMatchObject({ kind: 'latency', addMs: 1000 });
    } finally {
      await proxy.close();
    }
  });

  it('takes the fault phases of a scenario', async () => {
    const fu = await serveUpstream();
    const io = captureIo();
    const proxy = await startProxy(io, { upstream: fu.url, port: '0', scenario: 'brownout' });
    try {
      expect(proxy.faults().length).toBeGreaterThan(0);
      expect(io.out).toContain('(from brownout)');
    } finally {
      await proxy.close();
    }
  });

  it.each([
    [['proxy'], '--upstream: required'],
    [
      ['proxy', '--upstream', 'localhost:11434'],
      '--upstream: must be an http:// or https:// URL, got "localhost:11434"',
    ],
    [['proxy', '--upstream', 'ftp://x'], '--upstream: must be an http:// or https:// URL, got "ftp://x"'],
    [['proxy', '--upstream', 'http://127.0.0.1:1', '--rpm', 'lots'], '--rpm: expected a whole number, got "lots"'],
    [
      ['proxy', '--upstream', 'http://127.0.0.1:1', '--faults', 'none.json'],
      '--faults: cannot read none.json: no such file',
    ],
    [
      ['proxy', '--upstream', 'http://127.0.0.1:1', '--faults', 'bad.json'],
      'bad.json: faults[0].kind prefill-rejected cannot be injected by a proxy',
    ],
    [
      ['proxy', '--upstream', 'http://127.0.0.1:1', '--faults', 'filter.json'],
      'filter.json: faults[0] content-filter mode finish (the default) cannot be injected by a proxy',
    ],
    [
      ['proxy', '--upstream', 'http://127.0.0.1:1', '--scenario', 'filter.yaml'],
      'content-filter mode finish cannot be injected by a proxy',
    ],
    [
      ['proxy', '--upstream', 'http://127.0.0.1:1', '--faults', 'bad.json', '--scenario', 'x'],
      '--faults and --scenario both give fault phases',
    ],
  ])('%j is bad input: one line, exit 2', async (argv, line) => {
    const dir = tempDir({
      'bad.json': '[{"kind":"prefill-rejected"}]',
      'filter.json': '[{"kind":"content-filter"}]',
      'filter.yaml': FILTER_SCENARIO,
    });
    const r = await cli([...argv, '--port', '0'], { cwd: dir });
    expect(r.code).toBe(EXIT.usage);
    expect(r.err).toContain(line);
    expect(r.err.trim().split('\n')).toHaveLength(1);
  });

  it('stops when asked, closing its connections', async () => {
    const fu = await serveUpstream();
    const io = captureIo();
    let stop!: (why: unknown) => void;
    const code = proxyCommand(io, { upstream: fu.url, port: '0' }, new Promise((resolve) => (stop = resolve)));
    await new Promise((resolve) => setImmediate(resolve));
    stop(undefined);
    expect(await code).toBe(EXIT.ok);
    expect(io.out).toContain('stopping\n');
  });
});
