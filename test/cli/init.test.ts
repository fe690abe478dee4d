import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { starterScenario } from '../../src/cli/commands/init.js';
import { loadScenario } from '../../src/scenario/load-scenario.js';
import { cli, tempDir } from './capture-io.js';

describe('stormlab init', () => {
  it('writes a starter that loads as written, and runs', async () => {
    const dir = tempDir();
    const r = await cli(['init', 'checkout'], { cwd: dir });
    expect(r.code).toBe(0);
    expect(r.out).toBe('wrote checkout.yaml: run it with  npx stormlab run checkout.yaml\n');
    const text = r.files.get('checkout.yaml')!;
    expect(text).toBe(starterScenario('checkout'));
    writeFileSync(join(dir, 'checkout.yaml'), text);
    const s = loadScenario(join(dir, 'checkout.yaml'));
    expect(s.name).toBe('checkout');
    expect(s.variants.map((v) => v.name)).toEqual(['naive', 'engine']);
    const run = await cli(['compare', 'checkout.yaml', '-q'], { cwd: dir });
    expect(run.err).toBe('');
    expect(run.code).toBe(0);
  });

  it('names the file my-scenario.yaml by default, and never overwrites', async () => {
    const dir = tempDir({ 'my-scenario.yaml': 'mine' });
    const r = await cli(['init'], { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.err).toBe('stormlab: init: my-scenario.yaml already exists; pick another name\n');
    expect(readFileSync(join(dir, 'my-scenario.yaml'), 'utf8')).toBe('mine');
    expect(existsSync(join(dir, 'other.yaml'))).toBe(false);
  });

  it('refuses a name that is not a plain file name', async () => {
    const r = await cli(['init', '../x'], { cwd: tempDir() });
    expect(r.code).toBe(2);
    expect(r.err).toBe(`stormlab: init: expected a name of letters, digits, '.', '_' or '-', got "../x"\n`);
  });
});
