import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { queuedScenario } from '../../src/explore/queue-points.js';
import { UnreadableFile } from '../../src/scenario/read-bounded-file.js';
import { tempDir } from '../cli/capture-io.js';

describe('queuedScenario: the text that travels with a queued point', () => {
  it('is the file as written, or a bundled scenario by name', () => {
    const dir = tempDir({ 'mine.yaml': 'name: mine\n' });
    expect(queuedScenario({ scenario: 'mine.yaml', cwd: dir, set: [] })).toEqual({
      file: 'mine.yaml',
      text: 'name: mine\n',
    });
    expect(queuedScenario({ scenario: 'retry-storm', cwd: dir, set: [] }).file).toBe('retry-storm.yaml');
  });

  it('is read as the loader reads it: a fifo swapped in after the check is refused, never waited on', () => {
    const dir = tempDir();
    execFileSync('mkfifo', [join(dir, 'swapped.yaml')]);
    expect(() => queuedScenario({ scenario: 'swapped.yaml', cwd: dir, set: [] })).toThrow(
      new UnreadableFile('is a fifo (named pipe), not a regular file'),
    );
  });
});
