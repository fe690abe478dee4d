import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { scenarioTable } from '../scripts/scenario-table.js';

// The README's figures for the bundled scenarios are measured, not written: the table is what
// `npm run scenario-table` prints (every variant simulated, seed 1, the same on any machine).
describe("the README's table of bundled scenarios", () => {
  it('is what `npm run scenario-table` prints now (run it and paste the table after changing a scenario or the engine)', () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    expect(readme).toContain(`### Bundled scenarios\n\n${scenarioTable()}\n`);
  }, 60_000);
});
