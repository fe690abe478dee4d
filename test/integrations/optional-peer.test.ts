import { describe, expect, it } from 'vitest';
import { loadPeer, MissingPeerError } from '../../src/integrations/optional-peer.js';

describe('optional peers', () => {
  it('a missing peer is one line saying what to install', async () => {
    const err = await loadPeer(
      'stormlab-no-such-peer',
      'stormlab/example',
      () => import(String('stormlab-no-such-peer')),
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MissingPeerError);
    expect((err as MissingPeerError).message).toBe(
      'stormlab/example needs the stormlab-no-such-peer package, which is not installed: npm install stormlab-no-such-peer',
    );
    expect((err as MissingPeerError).code).toBe('ERR_STORMLAB_MISSING_PEER');
  });

  it('an installed peer loads, and other errors pass through unchanged', async () => {
    await expect(loadPeer('yaml', 'stormlab/example', () => import('yaml'))).resolves.toHaveProperty('parse');
    const boom = new Error('boom');
    await expect(loadPeer('yaml', 'stormlab/example', () => Promise.reject(boom))).rejects.toBe(boom);
  });
});
