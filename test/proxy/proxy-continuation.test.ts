import { describe, expect, it } from 'vitest';
import { EXIT } from '../../src/cli/io.js';
import { cli, tempDir } from '../cli/capture-io.js';

// A scenario declaring a model's continuation cannot be honoured by a proxy (it does not read
// conversations): refused in one line, exit 2, before it listens.

const SCENARIO = `name: c
duration: 10s
arrival: { type: constant, rate: 5 }
tokens: { prompt: 100, completion: 50 }
layers:
  - { name: llm, retry: { policy: sdk } }
upstream:
  models:
    - { name: primary, slots: 8, queue: 16, ttft: 200ms, tpot: 10ms }
    - { name: chat, slots: 8, queue: 16, ttft: 200ms, tpot: 10ms, continuation: prefill }
`;

describe('stormlab proxy --scenario with a continuation declaration', () => {
  it('is refused in one line naming the model, exit 2', async () => {
    const dir = tempDir({ 'c.yaml': SCENARIO });
    const r = await cli(['proxy', '--upstream', 'http://127.0.0.1:1', '--scenario', 'c.yaml', '--port', '0'], {
      cwd: dir,
    });
    expect(r.code).toBe(EXIT.usage);
    expect(r.err.trim().split('\n')).toEqual([
      "stormlab: --scenario c.yaml: upstream.models[1].continuation cannot be honoured by a proxy: it does not read conversations, so whether a prefill is continued is the upstream's own (serve models it)",
    ]);
  });
});
