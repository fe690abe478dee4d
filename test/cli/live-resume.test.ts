import { describe, expect, it } from 'vitest';
import { EXIT } from '../../src/cli/io.js';
import { liveResumeProblem } from '../../src/run/live/live-resume.js';
import { loadScenario } from '../../src/scenario/load-scenario.js';
import { cli } from './capture-io.js';

// The live driver sends no prefill: a live run whose engine would resume broken streams (the
// simulator does) is refused in one line, before anything is sent, instead of diverging.

describe('stormlab run --mode live with a resuming stream layer', () => {
  it('is refused in one line naming the variant and the layer, exit 2', async () => {
    const r = await cli(['run', 'stream-faults', '--variant', 'engine-resume', '--mode', 'live', '--no-ui']);
    expect(r.code).toBe(EXIT.usage);
    expect(r.err.trim().split('\n')).toHaveLength(1);
    expect(r.err).toContain(
      '--mode live: variant engine-resume: layers[1] would resume broken streams on a model declaring continuation: prefill, which the live driver does not do',
    );
  });

  it('only where the engine would resume: resume off, no declaration, or no engine runs as before', () => {
    const problem = (variant: string, set: string[] = []) =>
      liveResumeProblem(loadScenario('stream-faults', { variant, set }), variant);
    expect(problem('engine-resume')).toBeDefined();
    expect(problem('engine-resume', ['engine.stream.resume=false'])).toBeUndefined();
    expect(problem('engine-resume', ['layers[1].retry.policy=naive'])).toBeUndefined();
    expect(problem('engine')).toBeUndefined();
  });
});
