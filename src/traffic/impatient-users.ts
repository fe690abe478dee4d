import type { SeededRandom } from '../engine/random.js';
import { sampler } from '../upstream/distribution.js';
import type { EventHandler, Scheduler } from '../upstream/scheduler.js';
import { USERS_DEFAULTS, type UsersConfig } from './tool-call-config.js';

const K_PATIENCE = 1;
const K_AFTER_ERROR = 2;

interface Task {
  key: number;
  intendedStart: number;
  /** Submissions still running. */
  live: number;
  resubmits: number;
  /** Resubmissions after an error scheduled and not yet sent. */
  due: number;
  /** When the user's patience with the latest submission runs out. */
  patienceAt: number;
  settled: boolean;
}

/** Starts one submission of root task `root` (tree key `key`) now. */
export type Submit = (root: number, key: number, now: number) => void;
/** The task of `root` is over for its user: the first submission that succeeded, or the last that failed. */
export type Settle = (root: number, intendedStart: number, ok: boolean, now: number) => void;

/**
 * The outermost amplifier: users who resubmit. A user whose task has not answered within a
 * patience drawn for it submits it again (the first submission runs on: a double click), and a
 * user whose submission failed resubmits with probability `onError` after `errorDelayMs`; at
 * most `maxResubmits` times per task. Every submission is the same intent (the same root key,
 * so the same tree and the same tool intents below it). The task is settled by the first
 * submission that succeeds, or failed when none is left running and no resubmission is due.
 */
export class ImpatientUsers implements EventHandler {
  private readonly tasks = new Map<number, Task>();
  private readonly patience: () => number;
  private readonly errorDelay: () => number;
  private readonly draw: () => number;
  private readonly handlerId: number;

  constructor(
    private readonly cfg: UsersConfig,
    private readonly scheduler: Scheduler,
    random: SeededRandom,
    private readonly submit: Submit,
    private readonly settle: Settle,
    private readonly onSubmit: (resubmit: boolean, impatient: boolean, now: number) => void,
  ) {
    this.patience = sampler(cfg.patienceMs ?? USERS_DEFAULTS.patienceMs, random.split('patience'));
    this.errorDelay = sampler(cfg.errorDelayMs ?? USERS_DEFAULTS.errorDelayMs, random.split('error-delay'));
    const r = random.split('on-error');
    this.draw = () => r.next();
    this.handlerId = scheduler.register(this);
  }

  /** Root task `root` arrives: its user submits it for the first time. */
  arrive(root: number, key: number, intendedStart: number, now: number): void {
    this.tasks.set(root, { key, intendedStart, live: 0, resubmits: 0, due: 0, patienceAt: Infinity, settled: false });
    this.send(root, false, false, now);
  }

  /**
   * A submission of `root` ended; true if it settled the task with a success. `retryAfterMs`
   * ≥ 0 marks a refusal at entry with that hint: the user tries again (while resubmissions are
   * left) after the hint if it honours hints, else after its own delay.
   */
  ended(root: number, ok: boolean, now: number, retryAfterMs = -1): boolean {
    const task = this.tasks.get(root);
    if (task === undefined) return false;
    task.live--;
    if (task.settled) {
      if (task.live === 0) this.tasks.delete(root);
      return false;
    }
    if (ok) {
      this.close(root, task, true, now);
      return true;
    }
    const refused = retryAfterMs >= 0;
    const again = refused || (this.cfg.onError > 0 && this.draw() < this.cfg.onError);
    if (task.resubmits < this.cfg.maxResubmits && again) {
      task.resubmits++;
      task.due++;
      const honour = refused && (this.cfg.honourRetryAfter ?? USERS_DEFAULTS.honourRetryAfter);
      const delay = honour ? retryAfterMs : Math.max(0, this.errorDelay());
      this.scheduler.schedule(now + delay, this.handlerId, K_AFTER_ERROR, root);
      return false;
    }
    if (task.live === 0 && task.due === 0) this.close(root, task, false, now);
    return false;
  }

  handle(kind: number, root: number, now: number): void {
    const task = this.tasks.get(root);
    if (task === undefined || task.settled) return;
    if (kind === K_AFTER_ERROR) {
      task.due--;
      return this.send(root, true, false, now);
    }
    // K_PATIENCE: still waiting on the latest submission; resubmit if the user still may.
    if (now < task.patienceAt || task.resubmits >= this.cfg.maxResubmits) return;
    task.resubmits++;
    this.send(root, true, true, now);
  }

  private send(root: number, resubmit: boolean, impatient: boolean, now: number): void {
    const task = this.tasks.get(root)!;
    task.live++;
    this.onSubmit(resubmit, impatient, now);
    const wait = this.patience();
    task.patienceAt = now + Math.max(0, wait);
    if (wait !== Infinity && task.resubmits < this.cfg.maxResubmits)
      this.scheduler.schedule(task.patienceAt, this.handlerId, K_PATIENCE, root);
    this.submit(root, task.key, now);
  }

  private close(root: number, task: Task, ok: boolean, now: number): void {
    task.settled = true;
    if (task.live === 0) this.tasks.delete(root);
    this.settle(root, task.intendedStart, ok, now);
  }
}
