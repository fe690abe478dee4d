import { existsSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  BUNDLED_DIR,
  bundledDescription,
  listBundledScenarios,
  resolveScenarioPath,
} from '../../src/scenario/bundled.js';
import { loadScenario } from '../../src/scenario/load-scenario.js';
import { ScenarioError } from '../../src/scenario/scenario-error.js';
import { BUNDLED_NAMES } from '../helpers/bundled-names.js';

const NAMES = BUNDLED_NAMES;

describe('bundled scenarios', () => {
  const bundled = listBundledScenarios();

  it('lists every file with its one-line description', () => {
    expect(bundled.map((b) => b.name)).toEqual(NAMES);
    for (const b of bundled) {
      expect(bundledDescription(b.file).length, b.name).toBeGreaterThan(20);
      expect(bundledDescription(b.file)).not.toContain('\n');
      expect(basename(b.file)).toBe(`${b.name}.yaml`);
    }
  });

  it.each(NAMES)('%s loads, validates, and every variant resolves', (name) => {
    const s = loadScenario(name);
    expect(s.name).toBe(name);
    expect(s.variants.length).toBeGreaterThanOrEqual(2);
    for (const v of s.variants) expect(loadScenario(name, { variant: v.name }).name).toBe(name);
  });

  it.each(NAMES)('%s opens with a comment header: what it shows, what to look at, how to run it', (name) => {
    const text = readFileSync(join(BUNDLED_DIR, `${name}.yaml`), 'utf8');
    expect(text.startsWith(`# ${name} — `)).toBe(true);
    for (const part of ['What it shows', 'What to look at', 'How to run it']) expect(text).toContain(`# ${part}`);
  });

  it('retry-storm: 3 layers of naive ×3 under a full outage for the whole run', () => {
    const s = loadScenario('retry-storm');
    expect(s.traffic.layers.map((l) => [l.name, l.fanout, l.retry.policy === 'naive' && l.retry.attempts])).toEqual([
      ['orchestrator', 1, 3],
      ['agent', 3, 3],
      ['llm', 1, 3],
    ]);
    // Through the drain too: a late root task's retries must fail as well for 27.0× exactly.
    expect(s.upstream.faults).toEqual([{ kind: 'outage', fromMs: 0, toMs: expect.any(Number), rate: 1, status: 503 }]);
    expect(s.upstream.faults[0].toMs).toBeGreaterThanOrEqual(s.durationMs + s.drainMs);
  });

  it('throughput: closed-loop users with no think time, no faults, a zero-latency model with room for all', () => {
    const s = loadScenario('throughput');
    expect(s.traffic.arrival).toEqual({ type: 'closed', users: 256, thinkMs: 0 });
    expect(s.upstream.faults).toEqual([]);
    expect(s.upstream.models).toEqual([expect.objectContaining({ ttftMs: 0, tpotMs: 0, queue: 0 })]);
    expect(s.upstream.models[0].slots).toBeGreaterThanOrEqual(s.live.connections);
    expect(s.live).toEqual({ connections: 256, api: 'openai', stream: false });
  });

  it('brownout: faults[0] is the errors phase, and --set reaches it', () => {
    const s = loadScenario('brownout', { set: ['upstream.faults[0].rate=0.5'] });
    expect(s.upstream.faults[0]).toMatchObject({ kind: 'errors', rate: 0.5, status: { 429: 0.5, 503: 0.5 } });
    expect(s.upstream.faults[1]).toMatchObject({
      kind: 'latency',
      factor: 3,
      fromMs: s.durationMs / 3,
      toMs: (2 * s.durationMs) / 3,
    });
  });

  it('tpm-burst: variants differ by a tokens/min limit matching the quota', () => {
    const s = loadScenario('tpm-burst');
    expect(s.variants.map((v) => v.name)).toEqual(['rps-only', 'rps+tpm']);
    const limits = (v: string) => {
      const llm = loadScenario('tpm-burst', { variant: v }).traffic.layers[1].retry;
      return llm.policy === 'engine' ? llm.engine.limits : undefined;
    };
    expect(limits('rps-only')?.map((l) => l.unit)).toEqual(['requests']);
    expect(limits('rps+tpm')).toContainEqual(
      expect.objectContaining({ name: 'model_tpm', unit: 'tokens', rate: s.upstream.models[0].tpm, per: 'minute' }),
    );
  });

  it('replicas: a replicated engine layer; the variants differ by engine.state only', () => {
    const s = loadScenario('replicas');
    expect(s.variants.map((v) => v.name)).toEqual(['local', 'shared']);
    const [local, shared] = ['local', 'shared'].map((v) => loadScenario('replicas', { variant: v }).traffic);
    expect(local.layers[0]).toMatchObject({ name: 'gateway', replicas: 4, retry: { policy: 'engine' } });
    expect([local.engine.state, shared.engine.state]).toEqual(['local', 'shared']);
    expect({ ...shared, engine: { ...shared.engine, state: 'local' } }).toEqual(local);
  });

  it('fallback and sdk-stack have what they are about', () => {
    expect(loadScenario('fallback').traffic.layers.at(-1)?.models).toEqual(['primary', 'secondary']);
    expect(loadScenario('metastable').upstream.cancelOnDisconnect).toBe(false);
    const sdk = loadScenario('sdk-stack');
    expect(sdk.traffic.layers.map((l) => l.retry.policy)).toEqual(['none', 'naive', 'sdk']);
    expect(loadScenario('sdk-stack', { variant: 'naive' }).traffic).toEqual(sdk.traffic);
  });

  it('resolveScenarioPath takes a path or a bare bundled name', () => {
    const file = join(BUNDLED_DIR, 'retry-storm.yaml');
    expect(resolveScenarioPath('retry-storm')).toBe(file);
    expect(resolveScenarioPath(file)).toBe(file);
    expect(existsSync(resolveScenarioPath('tpm-burst'))).toBe(true);
    expect(() => resolveScenarioPath('retry-stom')).toThrow(
      `retry-stom: 1 problem\n  no such file or bundled scenario; did you mean retry-storm? (bundled: ${NAMES.join(', ')})`,
    );
    expect(() => resolveScenarioPath('scenarios/nope.yaml')).toThrow(ScenarioError);
    expect(listBundledScenarios('/nonexistent')).toEqual([]);
  });
});
