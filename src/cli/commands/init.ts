import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { EXIT, UsageError, type Io } from '../io.js';
import { writeOutput } from '../write-output.js';

/** A starter scenario: every section present, each field explained, valid as written. */
export function starterScenario(name: string): string {
  return `# yaml-language-server: $schema=./node_modules/stormlab/scenario.schema.json
# ${name}: a starter scenario. Every field is described in docs/scenario-reference.md.
# Run it:     npx stormlab run ${name}.yaml
# Compare:    npx stormlab compare ${name}.yaml      (naive retries vs the engine)
name: ${name}
description: Three layers of agents against a model that fails 30 % of the time for 20 s.
seed: 1                    # same seed, same result to the byte
duration: 60s              # how long root tasks arrive (units: ms, s, m, h)
drain: 60s                 # then how long in-flight work may take to finish
arrival: { type: constant, rate: 10 }   # root tasks per second (also poisson, ramp, burst, closed)
deadline: 30s              # each root task's deadline; it propagates down the tree
tokens:                    # tokens of each LLM call: a number or a distribution
  prompt: { dist: lognormal, median: 800, p99: 4000 }
  completion: { dist: lognormal, median: 200, p99: 1000 }
layers:                    # the call tree, top first; the last layer calls the model
  - name: orchestrator
    fanout: 1              # children each call starts at the next layer
    retry: { policy: naive, attempts: 3 }   # none | naive | sdk | engine
  - name: agent
    fanout: 3
    timeout: 20s           # per-attempt timeout at this layer
    retry: { policy: naive, attempts: 3 }
  - name: llm
    retry: { policy: naive, attempts: 3 }
    models: [primary]      # the model, then fallbacks in order
engine:                    # options of every layer whose retry policy is engine
  profile: http            # the engine as guardedFetch ships it (core: new Guard()'s defaults)
  maxAttempts: 3           # what you set here is merged over the profile, e.g.:
  # retryBudget: { ratio: 0.5 }     # retries at most 50 % of first attempts (http's value)
  # throttle: { k: 3 }              # adaptive throttling: drops calls while the upstream refuses them
  # breaker: { failureRatio: 0.8 }  # opens when 80 % of the calls in its window fail
upstream:
  cancelOnDisconnect: false   # abandoned requests still cost the upstream (wasted tokens)
  models:
    - name: primary
      slots: 64            # requests served at once
      queue: 128           # requests waiting for a slot; past it the model sheds with 529
      ttft: { dist: lognormal, median: 300ms, p99: 2s }   # time to first token
      tpot: 20ms           # time per output token
      rpm: 6000            # requests-per-minute quota (429 past it)
  faults:                  # errors, outage, latency, reset, hang, midstream, quota
    - { kind: errors, from: 20s, to: 40s, rate: 0.3, status: { 503: 0.7, 429: 0.3 } }
# Without variants, compare runs naive (3 attempts at every layer) and engine (every layer).
variants:
  naive:
    layers[*].retry: { policy: naive, attempts: 3 }
  engine:
    layers[*].retry: { policy: engine }
expect:                    # judged after every run; exit 1 when one fails
  - variants.engine.amplification < 1.5
`;
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/** `stormlab init [name]`: writes `<name>.yaml`, a commented starter scenario; never overwrites. */
export function initCommand(io: Io, name = 'my-scenario'): number {
  const base = name.replace(/\.ya?ml$/, '');
  if (!NAME.test(base))
    throw new UsageError(`init: expected a name of letters, digits, '.', '_' or '-', got ${JSON.stringify(name)}`);
  const file = `${base}.yaml`;
  if (existsSync(resolve(io.cwd, file))) throw new UsageError(`init: ${file} already exists; pick another name`);
  writeOutput(io, 'init', file, starterScenario(base));
  io.stdout(`wrote ${file}: run it with  npx stormlab run ${file}\n`);
  return EXIT.ok;
}
