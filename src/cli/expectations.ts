import { GateError } from '../gate/gate-error.js';
import { parseExpectation, type Expectation } from '../gate/expectation.js';
import { MetricCatalog } from '../gate/metric-catalog.js';
import type { Scenario } from '../scenario/scenario.js';
import { ScenarioError } from '../scenario/scenario-error.js';
import { UsageError } from './io.js';

/**
 * The expectations a run is judged by: the scenario's `expect:` list, then each `--expect`.
 * All are checked before anything runs, so a typo costs no simulation: every problem in the
 * file is reported with its place (`retry-storm.yaml: expect[1]: unknown metric …`), a bad
 * flag as `--expect "…": …`; either way exit 2.
 */
export function expectationsOf(scenario: Scenario, flagged: readonly string[] = []): Expectation[] {
  const catalog = MetricCatalog.ofScenario(scenario);
  const variants = [...scenario.variants.map((v) => v.name), scenario.name];
  const problems: string[] = [];
  const parse = (text: string, where: string): Expectation[] => {
    try {
      return [parseExpectation(text, catalog, variants)];
    } catch (e) {
      if (!(e instanceof GateError)) throw e;
      problems.push(`${where}: ${e.message}`);
      return [];
    }
  };
  const fromFile = scenario.expect.flatMap((text, i) => parse(text, `expect[${i}]`));
  if (problems.length > 0) throw new ScenarioError(scenario.source, problems);
  const fromFlags = flagged.flatMap((text) => parse(text, `--expect ${JSON.stringify(text)}`));
  if (problems.length > 0) throw new UsageError(problems.join('\n'));
  return [...fromFile, ...fromFlags];
}
