import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeWhole } from '../../src/cli/write-whole.js';

const dir = () => mkdtempSync(join(tmpdir(), 'stormlab-write-whole-'));

describe('outputs are written whole or not at all', () => {
  it('a new file, and one replaced: the whole text, its mode kept, nothing left beside it', () => {
    const d = dir();
    const p = join(d, 'out.yaml');
    writeWhole(p, 'one\n');
    expect(readFileSync(p, 'utf8')).toBe('one\n');
    chmodSync(p, 0o640);
    writeWhole(p, 'two\n'.repeat(10_000));
    expect(readFileSync(p, 'utf8')).toBe('two\n'.repeat(10_000));
    expect(statSync(p).mode & 0o777).toBe(0o640);
    expect(readdirSync(d)).toEqual(['out.yaml']);
  });

  it('a write that cannot finish leaves the old file as it was, and no part of the new one', () => {
    const d = dir();
    const p = join(d, 'out.yaml');
    writeFileSync(p, 'old\n');
    // The file beside it cannot be made (a directory has its name): the target is not touched.
    mkdirSync(`${p}.${process.pid}.partial`);
    expect(() => writeWhole(p, 'new\n')).toThrow(/EISDIR/);
    expect(readFileSync(p, 'utf8')).toBe('old\n');
  });

  it('a symlink is written through, not replaced', () => {
    const d = dir();
    writeFileSync(join(d, 'real.yaml'), 'old\n');
    symlinkSync(join(d, 'real.yaml'), join(d, 'link.yaml'));
    writeWhole(join(d, 'link.yaml'), 'new\n');
    expect(readFileSync(join(d, 'real.yaml'), 'utf8')).toBe('new\n');
    expect(readdirSync(d).sort()).toEqual(['link.yaml', 'real.yaml']);
  });
});
