import { describe, expect, it } from 'vitest';
import { loadScenario } from '../../src/scenario/load-scenario.js';
import { BASE, edit, problemsOf } from './helpers.js';

// A model's `continuation` declaration in a scenario, and `prefill-rejected` as its fault form.

const PRIMARY = '{ name: primary, slots: 8, queue: 16, ttft: 200ms, tpot: 10ms }';

describe('scenario: continuation per model', () => {
  it('continuation: prefill is kept; none (the default) is left out', () => {
    const declared = loadScenario(edit(PRIMARY, PRIMARY.replace(' }', ', continuation: prefill }')));
    expect(declared.upstream.models[0].continuation).toBe('prefill');
    const none = loadScenario(edit(PRIMARY, PRIMARY.replace(' }', ', continuation: none }')));
    expect(none.upstream.models[0]).not.toHaveProperty('continuation');
    expect(loadScenario(BASE).upstream.models[0]).not.toHaveProperty('continuation');
  });

  it('an unknown declaration is one line naming the choices', () => {
    expect(problemsOf(edit(PRIMARY, PRIMARY.replace(' }', ', continuation: resume }')))).toEqual([
      'upstream.models[0].continuation: expected one of prefill, none, got "resume"',
    ]);
  });

  it('prefill-rejected must reach a model that declares continuation: prefill', () => {
    const named = `${BASE}  faults:\n    - { kind: prefill-rejected, model: primary }\n`;
    expect(problemsOf(named)).toEqual([
      'upstream.faults[0]: prefill-rejected on model "primary", which does not declare continuation: prefill, so it rejects every prefill already (declare it, or drop the fault)',
    ]);
    const all = `${BASE}  faults:\n    - { kind: prefill-rejected }\n`;
    expect(problemsOf(all)).toEqual([
      'upstream.faults[0]: prefill-rejected, but no model declares continuation: prefill, so every model rejects prefills already (declare it on a model, or drop the fault)',
    ]);
    const declared = edit(PRIMARY, PRIMARY.replace(' }', ', continuation: prefill }'), named);
    expect(loadScenario(declared).upstream.faults[0]).toMatchObject({ kind: 'prefill-rejected', model: 'primary' });
  });
});
