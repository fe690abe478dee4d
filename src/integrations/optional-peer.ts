import { StormlabError } from '../engine/errors.js';

/** A subpath was imported without the optional peer dependency it builds on. */
export class MissingPeerError extends StormlabError {
  constructor(
    readonly peer: string,
    door: string,
    cause: unknown,
  ) {
    super(
      'ERR_STORMLAB_MISSING_PEER',
      `${door} needs the ${peer} package, which is not installed: npm install ${peer}`,
      {
        cause,
      },
    );
  }
}

/**
 * Loads the optional peer `peer` for the subpath `door`: its module, or a `MissingPeerError`
 * with one line saying what to install, instead of Node's resolution error naming a file deep
 * in the package. Only a missing `peer` itself is turned into that; other errors pass.
 */
export async function loadPeer<T>(peer: string, door: string, load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    if (err?.code === 'ERR_MODULE_NOT_FOUND' && String(err.message).includes(`'${peer}'`))
      throw new MissingPeerError(peer, door, e);
    throw e;
  }
}
