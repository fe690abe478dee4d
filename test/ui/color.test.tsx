import { cleanup, render } from 'ink-testing-library';
import { afterEach, describe, expect, it, vi } from 'vitest';

// Ink colours through chalk, which turns itself off when stdout is not a terminal (as under
// vitest). Force it on while chalk loads — this file runs in its own worker — then unset it.
vi.hoisted(() => {
  process.env.FORCE_COLOR = '1';
});
import { Dashboard } from '../../src/ui/Dashboard.js';
import { EnginePanel } from '../../src/ui/EnginePanel.js';
import { engineView, stripAnsi, twoVariants } from './fixture.js';
delete process.env.FORCE_COLOR;

afterEach(() => cleanup());

describe('colour', () => {
  it('colours by health when asked to, with the same text as without', () => {
    const colored = render(<Dashboard model={twoVariants()} color width={80} height={24} />).lastFrame() ?? '';
    const plain = render(<Dashboard model={twoVariants()} color={false} width={80} height={24} />).lastFrame() ?? '';
    expect(colored).toMatch(/\u001b\[31m✗ 14\.2×/); // failing amplification: red
    expect(colored).toMatch(/\u001b\[32m✓ 1\.08×/); // healthy: green
    expect(stripAnsi(colored)).toBe(plain);
  });

  it('writes no escape code at all with color false (NO_COLOR), not even bold or dim', () => {
    const plain = render(<EnginePanel view={engineView()} width={60} color={false} />).lastFrame() ?? '';
    expect(plain).not.toMatch(/\u001b/);
    expect(plain).toContain('open 3.2s');
    expect(plain).toContain('closed 32.4s');
    const colored = render(<EnginePanel view={engineView()} width={60} color />).lastFrame() ?? '';
    expect(colored).toMatch(/\u001b\[31mopen 3\.2s/);
  });
});
