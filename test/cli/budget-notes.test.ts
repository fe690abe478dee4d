import { beforeAll, describe, expect, it } from 'vitest';
import { budgetNotes } from '../../src/scenario/budget-notes.js';
import { loadScenario } from '../../src/scenario/load-scenario.js';
import { BASE, edit } from '../scenario/helpers.js';
import { cli, tempDir } from './capture-io.js';

/** The base scenario with a 30 s deadline and its agent layer on a stage of `plan`. */
const STAGED = edit(
  'fanout: 2,',
  'fanout: 2, stage: plan,',
  `${BASE}deadline: 30s\nstages: { plan: 90s, model: 10s }\nvariants:\n  naive: { "layers[*].retry.policy": naive }\n  tight: { stages.plan: 20s }\n`,
);
const NOTE =
  "note: stages.plan is 1.5m, longer than the deadline (30s): the deadline ends the stage's calls first, so its budget never binds";

describe('a stage budget longer than the deadline: a note on stderr, once', () => {
  let dir: string;
  beforeAll(() => {
    dir = tempDir({ 'staged.yaml': STAGED, 'fine.yaml': edit('plan: 90s', 'plan: 20s', STAGED) });
  });

  it('budgetNotes: a stage over the deadline, none at or under it, the variants named when only some have it', () => {
    const s = loadScenario(STAGED);
    const run = (variant: string, set: string[] = []) => ({
      name: variant,
      variant,
      scenario: loadScenario(STAGED, { variant, set }),
    });
    expect(budgetNotes([{ name: s.name, scenario: s }])).toEqual([NOTE.slice('note: '.length)]);
    expect(budgetNotes([run('naive'), run('tight')])).toEqual([`${NOTE.slice('note: '.length)} (variant naive)`]);
    expect(budgetNotes([run('tight')])).toEqual([]);
    // Exactly the deadline binds at the same moment: no note. No deadline: nothing to compare with.
    expect(budgetNotes([run('tight', ['stages.plan=30s'])])).toEqual([]);
    expect(budgetNotes([run('naive', ['deadline='])])).toEqual([]);
  });

  it('run, compare, sweep and tune say it once, and still run', async () => {
    for (const argv of [
      ['run', 'staged.yaml', '--variant', 'naive', '-q'],
      ['compare', 'staged.yaml', '--variants', 'naive,naive', '-q'],
      ['sweep', 'staged.yaml', '--variant', 'naive', '--workers', '1', '--param', 'arrival.rate=2,3', '-q'],
      [
        'tune',
        'staged.yaml',
        '--variant',
        'naive',
        '--workers',
        '1',
        '--maximize',
        'goodput',
        '--params',
        'arrival.rate=2:4',
        '--budget',
        '2',
        '-q',
      ],
    ]) {
      const r = await cli(argv, { cwd: dir });
      expect(r.code, `${argv.join(' ')}: ${r.err}`).toBe(0);
      expect(
        r.err.split('\n').filter((l) => l.startsWith('note: stages.')),
        argv.join(' '),
      ).toEqual([NOTE]);
    }
  });

  it('no note when every budget fits the deadline', async () => {
    const r = await cli(['run', 'fine.yaml', '--variant', 'naive', '-q'], { cwd: dir });
    expect(r.code).toBe(0);
    expect(r.err).not.toContain('note: stages.');
  });
});
