import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ENGINE_PROFILE_NAMES, ENGINE_PROFILES } from '../../src/engine/engine-profiles.js';
import { loadScenario } from '../../src/scenario/load-scenario.js';
import { resolveEngine } from '../../src/traffic/engine-guard.js';

// The engine profiles are one table in code (ENGINE_PROFILES); the README and the scenario
// reference quote it. These tests regenerate the quote and fail when a copy is stale.

const README = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
const REFERENCE = readFileSync(new URL('../../docs/scenario-reference.md', import.meta.url), 'utf8');

/** Each setting a profile holds: its option path (as guardedFetch takes it) and its scenario field. */
const ROWS: Array<[option: string, scenario: string | undefined]> = [
  ['retryBudget.ratio', 'engine.retryBudget.ratio'],
  ['throttle.k', 'engine.throttle.k'],
  ['breaker.failureRatio', 'engine.breaker.failureRatio'],
  ['breaker.throttledRatio', 'engine.breaker.throttledRatio'],
  ['headersTimeoutMs', 'engine.headersTimeoutMs'],
  ['stream.headersTimeoutMs', 'engine.stream.headers'],
  ['stream.firstTokenMs', 'engine.stream.firstToken'],
  ['stream.idleMs', 'engine.stream.idle'],
  ['stream.commit', 'engine.stream.commit'],
  ['stream.resume', 'engine.stream.resume'],
];

function at(o: unknown, path: string): unknown {
  return path.split('.').reduce<unknown>((node, k) => (node as Record<string, unknown>)[k], o);
}

/** Every leaf of a profile, as a dotted path. */
function leaves(o: object, prefix = ''): string[] {
  return Object.entries(o).flatMap(([k, v]) =>
    typeof v === 'object' && v !== null ? leaves(v, `${prefix}${k}.`) : [`${prefix}${k}`],
  );
}

function show(option: string, v: unknown): string {
  if (typeof v === 'string') return `\`${v}\``;
  if (option.endsWith('Ms') && typeof v === 'number') return `${v / 1000} s`;
  return String(v);
}

/** The table as the docs quote it. */
function profileTable(): string {
  const head = [
    'option',
    'in a scenario',
    '`http` (`guardedFetch`, the undici interceptor, scenarios)',
    '`core` (`new Guard()`)',
  ];
  const rows = ROWS.map(([option, field]) => [
    `\`${option}\``,
    field === undefined ? '—' : `\`${field}\``,
    ...ENGINE_PROFILE_NAMES.map((p) => show(option, at(ENGINE_PROFILES[p], option))),
  ]);
  const width = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(width[i])).join(' | ')} |`;
  return [line(head), line(width.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

/** What sits between the `engine-profiles` markers of a document. */
function quoted(doc: string): string {
  const m = /<!-- engine-profiles[^>]*-->\n([\s\S]*?)\n<!-- \/engine-profiles -->/.exec(doc);
  expect(m, 'the engine-profiles markers').not.toBeNull();
  return m![1];
}

describe('the engine profile table in the docs', () => {
  it('covers every setting of every profile, for the profiles the engine has', () => {
    expect(ENGINE_PROFILE_NAMES).toEqual(['http', 'core']);
    for (const p of ENGINE_PROFILE_NAMES)
      expect(leaves(ENGINE_PROFILES[p]).sort()).toEqual(ROWS.map((r) => r[0]).sort());
  });

  it('is quoted as it is by the README and by the scenario reference', () => {
    expect(quoted(README)).toBe(profileTable());
    expect(quoted(REFERENCE)).toBe(profileTable());
  });

  it("names each setting's scenario field rightly: a scenario that sets it runs with it", () => {
    const text = `
name: p
duration: 1s
arrival: { type: constant, rate: 1 }
tokens: { prompt: 10, completion: 10 }
layers: [{ name: llm, retry: { policy: engine } }]
upstream: { models: [{ name: m, slots: 1, queue: 0, ttft: 1ms, tpot: 0ms }] }
`;
    const resolvedAs: Record<string, string> = {
      'engine.stream.headers': 'stream.headersMs',
      'engine.stream.firstToken': 'stream.firstTokenMs',
      'engine.stream.idle': 'stream.idleMs',
    };
    for (const [option, field] of ROWS) {
      if (field === undefined) continue;
      const core = at(ENGINE_PROFILES.core, option);
      const value =
        typeof core === 'boolean'
          ? !core
          : typeof core === 'string'
            ? 'complete'
            : typeof core === 'number' && option.endsWith('Ms')
              ? core + 1000
              : Number(core) * 0.9;
      const s = loadScenario(text, { set: [`${field}=${value}`] });
      expect(at(resolveEngine(s.traffic.engine, {}), resolvedAs[field] ?? option), field).toBe(value);
    }
  });

  it("the README's Timeouts table gives the http profile's waits", () => {
    const rows = README.split('\n').filter((l) =>
      /^\| `(stream\.)?headersTimeoutMs`|^\| `stream\.(firstTokenMs|idleMs)`/.test(l),
    );
    const defaults = Object.fromEntries(
      rows.map((l) => {
        const [option, value] = l
          .split('|')
          .slice(1, 3)
          .map((c) => c.trim());
        return [option.replace(/`/g, '').replace(/ \(.*\)$/, ''), value];
      }),
    );
    expect(defaults).toEqual({
      'stream.headersTimeoutMs': show('x.Ms', ENGINE_PROFILES.http.stream.headersTimeoutMs),
      headersTimeoutMs: show('x.Ms', ENGINE_PROFILES.http.headersTimeoutMs),
      'stream.firstTokenMs': show('x.Ms', ENGINE_PROFILES.http.stream.firstTokenMs),
      'stream.idleMs': show('x.Ms', ENGINE_PROFILES.http.stream.idleMs),
    });
  });
});
