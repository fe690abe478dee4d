import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { loadScenario } from '../../src/scenario/load-scenario.js';
import { ScenarioError } from '../../src/scenario/scenario-error.js';

/** A small valid scenario: every test breaks one thing in it. */
export const BASE = `
name: t
duration: 10s
arrival: { type: constant, rate: 5 }
tokens: { prompt: 100, completion: 50 }
layers:
  - { name: agent, fanout: 2, retry: { policy: naive } }
  - { name: llm, retry: { policy: sdk } }
upstream:
  models:
    - { name: primary, slots: 8, queue: 16, ttft: 200ms, tpot: 10ms }
`;

/** The ScenarioError that loading `text` (inline, or a path) throws. */
export function errorOf(text: string, set?: string[]): ScenarioError {
  try {
    loadScenario(text, { set });
  } catch (e) {
    expect(e).toBeInstanceOf(ScenarioError);
    return e as ScenarioError;
  }
  throw new Error('expected a ScenarioError, but the scenario loaded');
}

export function problemsOf(text: string, set?: string[]): string[] {
  return errorOf(text, set).problems;
}

/** BASE with `from` replaced by `to` (which must be found). */
export function edit(from: string, to: string, text = BASE): string {
  expect(text).toContain(from);
  return text.replace(from, to);
}

let dir: string | undefined;

/** Writes `text` to a fresh temp file called `name`; returns its path. */
export function tempFile(name: string, text: string): string {
  dir ??= mkdtempSync(join(tmpdir(), 'stormlab-scenario-'));
  const file = join(dir, name);
  writeFileSync(file, text);
  return file;
}
