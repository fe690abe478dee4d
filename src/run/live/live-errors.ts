import { StormlabError } from '../../engine/errors.js';

/**
 * Most of the target's answers say the request is not one it takes — wrong path, unknown
 * model, missing auth — so whatever a run measured would be about that, not about retries
 * (a target answering 404 to everything looks like "amplification 27×, success 0 %").
 */
export class TargetRefusedError extends StormlabError {
  constructor(
    readonly refusals: number,
    readonly answers: number,
    readonly first: { status: number; message: string },
  ) {
    super(
      'ERR_STORMLAB_TARGET_REFUSED',
      `${refusals} of the first ${answers} answers were ${first.status === 401 || first.status === 403 ? 'auth refusals' : '4xx refusals'} ` +
        `(first: ${first.status}${first.message === '' ? '' : ` ${JSON.stringify(first.message)}`}); ` +
        'check the URL and its path, the model names, and auth (--header)',
    );
  }
}

/** The upstream behind a target (`--upstream`) could not be driven through its control API. */
export class UpstreamControlError extends StormlabError {
  constructor(message: string) {
    super('ERR_STORMLAB_UPSTREAM_CONTROL', message);
  }
}

/**
 * The target never gave one HTTP answer over a whole run (connections refused, reset, DNS
 * failing): nothing was measured about retries, only that nothing listens there.
 */
export class NoTargetError extends StormlabError {
  constructor(
    readonly target: string,
    readonly requests: number,
    readonly codes: string,
  ) {
    super(
      'ERR_STORMLAB_NO_TARGET',
      `--target ${target} never answered: ${requests} request${requests === 1 ? '' : 's'} got no HTTP answer (${codes}); is it running, at that address?`,
    );
  }
}
