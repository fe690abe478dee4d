import { render } from 'ink';
import { App } from '../ui/App.js';
import type { Io, Terminal } from './io.js';
import type { Playback } from './playback.js';

const FRAME_MS = 100;

/**
 * Shows `playback` in the Ink dashboard until it is done or the user quits (`q`, Ctrl-C), ticking
 * it every 100 ms of wall time. Resolves when the last frame is on screen.
 */
export function showDashboard(
  io: Io,
  terminal: Terminal,
  playback: Playback,
  onTick: (wallMs: number) => void,
): Promise<void> {
  return new Promise((resolve) => {
    let last = io.wallNow();
    let finished = false;
    const app = render(
      <App
        source={playback}
        onQuit={() => playback.stop()}
        onTogglePause={() => playback.togglePause()}
        color={io.env.NO_COLOR === undefined}
      />,
      { stdout: terminal.stdout, stdin: terminal.stdin, exitOnCtrlC: false, patchConsole: false },
    );
    const finish = (): void => {
      if (finished) return;
      finished = true;
      clearInterval(timer);
      // One more frame so the screen shows the end, then hand the terminal back.
      setTimeout(() => {
        app.unmount();
        resolve();
      }, FRAME_MS + 20);
    };
    const timer = setInterval(() => {
      const now = io.wallNow();
      onTick(now - last);
      last = now;
      if (playback.done) finish();
    }, FRAME_MS);
    playback.subscribe(() => {
      if (playback.done) finish();
    });
  });
}
