import { describe, expect, it } from 'vitest';
import { failure } from '../../src/cli/failure.js';
import { EXIT, PartialResultError, UsageError } from '../../src/cli/io.js';
import { OptionError, ShedError, StormlabError } from '../../src/engine/errors.js';
import { PointError } from '../../src/explore/point-error.js';
import { QueueError } from '../../src/explore/queue-target.js';
import { RefusedError } from '../../src/explore/refused-error.js';
import { SweepError } from '../../src/explore/sweep-error.js';
import { TuneError } from '../../src/explore/tune-error.js';
import { GateError } from '../../src/gate/gate-error.js';
import { MissingPeerError } from '../../src/integrations/optional-peer.js';
import { NoTargetError, TargetRefusedError, UpstreamControlError } from '../../src/run/live/live-errors.js';
import { ScenarioError } from '../../src/scenario/scenario-error.js';
import { captureIo } from './capture-io.js';

/** Every error a user can cause, as the commands throw them. */
const USER_ERRORS: Array<[string, StormlabError]> = [
  ['ERR_STORMLAB_USAGE', new UsageError('--speed: expected a speed like 10x, got "fast"')],
  ['ERR_STORMLAB_GATE', new GateError('unknown metric "amplificaton" (did you mean amplification?)')],
  ['ERR_STORMLAB_SWEEP', new SweepError(['--param a: 2 is given twice', '--param b: empty value'])],
  ['ERR_STORMLAB_TUNE', new TuneError('--params: expected a range')],
  ['ERR_STORMLAB_SCENARIO', new ScenarioError('bad.yaml', ['layers[1].fanout: expected a positive integer, got -2'])],
  ['ERR_STORMLAB_REFUSED', new RefusedError('every point is refused')],
  ['ERR_STORMLAB_QUEUE', new QueueError('--queue: no Redis answers at 127.0.0.1:1 (ECONNREFUSED)')],
  ['ERR_STORMLAB_OPTION', new OptionError('breaker.openMs must be a number >= 0, got -1', 'breaker.openMs')],
  ['ERR_STORMLAB_MISSING_PEER', new MissingPeerError('bullmq', '--queue', undefined)],
  ['ERR_STORMLAB_TARGET_REFUSED', new TargetRefusedError(10, 10, { status: 401, message: 'no key' })],
  ['ERR_STORMLAB_UPSTREAM_CONTROL', new UpstreamControlError('http://127.0.0.1:1: cannot reach its control API')],
];

describe('one error base, one mapping to exit codes', () => {
  it('every user-facing error is a StormlabError with its stable code: one line a problem, exit 2, no stack', () => {
    for (const [code, err] of USER_ERRORS) {
      expect(err, code).toBeInstanceOf(StormlabError);
      expect(err.code).toBe(code);
      expect(err.name).toBe(err.constructor.name);
      const io = captureIo();
      expect(failure(io, err), code).toBe(2);
      const lines = io.err.trimEnd().split('\n');
      expect(lines.length, code).toBe(err instanceof SweepError ? 2 : 1);
      expect(io.err).not.toMatch(/\n\s+at /);
      expect(io.out).toBe('');
    }
  });

  it("words each as the user reads it: a scenario's problem after its file, a flag's after stormlab:", () => {
    const io = captureIo();
    failure(io, new ScenarioError('bad.yaml', ['3:7: YAML syntax error: x', 'layers: y', '--set "a=1": z']));
    expect(io.err).toBe('bad.yaml:3:7: YAML syntax error: x\nbad.yaml: layers: y\nstormlab: --set "a=1": z\n');
    const sweep = captureIo();
    failure(sweep, new SweepError(['--param a: 2 is given twice', '--param b: empty value']));
    expect(sweep.err).toBe('stormlab: --param a: 2 is given twice\nstormlab: --param b: empty value\n');
  });

  it('an error that is no fault of the input escaping to the top is a bug: exit 70, with its stack', () => {
    for (const err of [new ShedError('budget'), new PointError(0, 3, ['k=1'], 'boom'), new Error('boom')]) {
      const io = captureIo();
      expect(failure(io, err)).toBe(70);
      expect(io.err).toMatch(/^stormlab: internal error: .*\n\s+at /);
    }
  });

  it('a partial result at a gate is exit 3, a target that never answered exit 4: one line each, no stack', () => {
    const cases: Array<[StormlabError, number]> = [
      [new PartialResultError('partial.json is a partial result'), EXIT.partial],
      [new NoTargetError('http://127.0.0.1:1', 40, 'ECONNREFUSED ×40'), EXIT.noTarget],
    ];
    for (const [err, code] of cases) {
      const io = captureIo();
      expect(failure(io, err)).toBe(code);
      expect(io.err.split('\n').filter(Boolean)).toHaveLength(1);
      expect(io.err).toMatch(/^stormlab: /);
      expect(io.err).not.toMatch(/\n\s+at /);
    }
  });
});
