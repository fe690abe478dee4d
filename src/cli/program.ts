import { readFileSync } from 'node:fs';
import { Command } from 'commander';
import { defineExplore, defineWorker } from './define-explore.js';
import { defineFiles } from './define-files.js';
import { defineRun } from './define-run.js';
import { defineProxy, defineServe } from './define-serve.js';
import { commandExitHelp } from './command-exits.js';
import { failure } from './failure.js';
import { EXIT, type Io } from './io.js';

/** The package's version (package.json sits two folders up from src/cli and dist/cli alike). */
function packageVersion(): string {
  return (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string })
    .version;
}

/**
 * Builds the CLI; `run(argv)` resolves to the exit code. Nothing here touches process.* directly.
 * Each command's code is loaded when that command runs (see the define-* modules), so start-up
 * costs commander and the option lists only: the dashboard's Ink, the live driver's undici, the
 * report's charts and the scenario schema load only for the commands that use them.
 */
export function createProgram(io: Io): { run(argv: string[]): Promise<number> } {
  let code: number = EXIT.ok;
  const program = new Command('stormlab')
    .description(
      'Retry storms in LLM and multi-agent backends: reproduce them, measure them, tame them with the engine.',
    )
    .version(packageVersion(), '-V, --version')
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.stdout(s), writeErr: (s) => io.stderr(s), outputError: () => {} })
    .showSuggestionAfterError(true);
  const context = { io, exit: (c: number) => void (code = c) };
  defineRun(program, context);
  defineServe(program, context);
  defineProxy(program, context);
  defineFiles(program, context);
  defineExplore(program, context);
  defineWorker(program, context);
  program
    .command('init')
    .argument('[name]', 'the scenario name; the file is <name>.yaml', 'my-scenario')
    .description('write a commented starter scenario to <name>.yaml (never overwrites)')
    .addHelpText('after', `\n${commandExitHelp('init', { usage: 'bad input, or <name>.yaml exists already' })}`)
    .action(async (name: string) => {
      const { initCommand } = await import('./commands/init.js');
      code = initCommand(io, name);
    });

  program
    .command('scenarios')
    .description('list the bundled scenarios')
    .addHelpText('after', `\n${commandExitHelp('scenarios')}`)
    .action(async () => {
      const { scenariosCommand } = await import('./commands/scenarios.js');
      code = scenariosCommand(io);
    });

  return {
    async run(argv: string[]): Promise<number> {
      try {
        await program.parseAsync(argv, { from: 'user' });
        return code;
      } catch (err) {
        return failure(io, err);
      }
    },
  };
}
