/**
 * `tms`'s program: the commands and their options (commander), and one run of it with the environment and output
 * it is given (./io.ts): bin/cli.ts runs it with the process's own, the tests inside their own process. Wiring
 * only; the commands live beside it.
 *
 * Exit codes: 0 ok, 1 the thing ran but failed (a connection test said no), 2 usage, 3 API error, 4 auth.
 */
import { Command, CommanderError } from 'commander';
import { ApiClient } from './client.ts';
import * as commands from './commands.ts';
import { projectDelivery } from './delivery.ts';
import { ApiError, CliError, EXIT } from './errors.ts';
import { out, printJson, terminalSafe } from './format.ts';
import { importFiles } from './import-files.ts';
import type { CliIo } from './io.ts';
import * as lifecycle from './lifecycle.ts';
import { rollback } from './rollback.ts';
import { collect, RUN_TYPES } from './start-body.ts';
import { WATCH_TAIL_DEFAULT, WATCH_TAIL_MAX } from './watch.ts';

/** What a run ends with, besides an error: a command that ran but failed sets `exitCode` (Ctx.fail). */
interface Outcome {
  exitCode: number;
}

/** Tracker options shared by `connect` and `start`. */
function trackerOptions(cmd: Command): Command {
  return cmd
    .option('--ado-org <org>', 'Azure DevOps organisation (name or URL)')
    .option('--ado-project <name>', 'Azure DevOps project')
    .option('--ado-pat <pat>', 'Azure DevOps personal access token (or env TMS_ADO_PAT)')
    .option('--jira-url <url>', 'Jira Cloud base URL')
    .option('--jira-email <email>', 'Jira service account e-mail')
    .option('--jira-token <token>', 'Jira API token (or env TMS_JIRA_TOKEN)')
    .option('--jira-key <key>', 'Jira project key');
}

function buildProgram(io: CliIo, outcome: Outcome): Command {
  const ctx = (cmd: Command): commands.Ctx => {
    const g = cmd.optsWithGlobals<{ api: string; json?: boolean }>();
    return {
      client: new ApiClient(g.api, io.env),
      json: g.json === true,
      io,
      out: (line) => out(io.stdout, line),
      printJson: (value) => printJson(io.stdout, value),
      fail: () => {
        outcome.exitCode = EXIT.failure;
      },
    };
  };
  const program = new Command('tms')
    .description('Tracker Migration Service CLI')
    .option(
      '--api <url>',
      'API base URL (env TMS_API_URL)',
      io.env.TMS_API_URL || 'http://127.0.0.1:3000/api',
    )
    .option('--json', 'print JSON')
    // Thrown instead of exiting, so usage errors get exit code 2 in one place (main).
    .exitOverride()
    // Its usage errors and help go to the run's output (colours and width are still the process's terminal's).
    .configureOutput({
      writeOut: (text) => io.stdout.write(text),
      writeErr: (text) => io.stderr.write(text),
    });

  program
    .command('login')
    .description('log in and store the tokens (under $TMS_HOME or ~/.config/tms, mode 0600)')
    .option('--email <email>', 'e-mail (or env TMS_EMAIL)')
    .option('--password <password>', 'password (or env TMS_PASSWORD)')
    .option('--tenant <id>', 'the tenant to sign in to, for an e-mail in several (default: its oldest)')
    .action((o, cmd: Command) => commands.login(ctx(cmd), o));

  const project = program.command('project').description('projects');
  project
    .command('create <name>')
    .description('create a project (Azure DevOps to Jira Cloud); prints its id')
    .option('--description <text>', 'description')
    .action((name: string, o, cmd: Command) => commands.projectCreate(ctx(cmd), name, o));
  project
    .command('list')
    .description('list projects')
    .action((_o, cmd: Command) => commands.projectList(ctx(cmd)));
  project
    .command('delivery <projectId>')
    .description("how the project's runs write into Jira, and what it costs; --mode/--batch-size change it")
    .option('--mode <mode>', "rest (Jira's REST API, the default) or jira-import (Jira's JSON importer)")
    .option('--batch-size <n>', 'issues per import file, 1 to 1500 (default 1500)')
    .action((projectId: string, o, cmd: Command) => projectDelivery(ctx(cmd), projectId, o));

  trackerOptions(
    program
      .command('connect <projectId>')
      .description('test and store the source and target connections (no options: retest the stored ones)'),
  ).action((projectId: string, o, cmd: Command) => commands.connect(ctx(cmd), projectId, o));

  program
    .command('scan <projectId>')
    .description("scan the project's source and print the summary")
    .action((projectId: string, _o, cmd: Command) => commands.scan(ctx(cmd), projectId));

  program
    .command('mappings <projectId>')
    .description("the project's mappings (suggested, saved or confirmed); --set edits and saves them")
    .option(
      '--set <kind.Source=Target>',
      'change an entry before saving, e.g. types.Bug=Task, users.a@b.com=none (repeatable)',
      collect,
    )
    .option('--confirm', 'save the suggestion (or the edits) and confirm the mappings (project MAPPED)')
    .action((projectId: string, o, cmd: Command) => lifecycle.mappings(ctx(cmd), projectId, o));

  program
    .command('quote <projectId>')
    .description("the project's quote; --accept accepts the quote shown (owner only)")
    .option('--accept', 'accept the quote: paid at once (project READY) or a checkout URL to pay at')
    .action((projectId: string, o, cmd: Command) => lifecycle.quote(ctx(cmd), projectId, o));

  trackerOptions(
    program
      .command('start <projectId>')
      .description('start a migration run')
      .option('--type <type>', RUN_TYPES.join('|')),
  )
    .option('--dry-run', 'preview only; nothing is written to Jira')
    .option('--no-attachments', 'do not migrate attachments')
    .option('--no-comments', 'do not migrate comments')
    .option('--no-links', 'do not migrate links')
    .option('--no-verify', 'do not verify every migrated item at the end (verified by default)')
    .option('--area <path>', 'only this area path')
    .option('--types <a,b>', 'only these work item types (comma-separated)')
    .option('--type-override <Source=Target>', 'map a work item type (repeatable)', collect)
    .option('--state-override <Source=Target>', 'map a state (repeatable)', collect)
    .action((projectId: string, o, cmd: Command) => commands.start(ctx(cmd), projectId, o));

  program
    .command('watch <runId>')
    .description('follow a run live until it is done')
    .option('--quiet', 'no log lines, only the progress bar')
    .option(
      '--tail <n>',
      `start at the run's newest n events (1-${WATCH_TAIL_MAX})`,
      String(WATCH_TAIL_DEFAULT),
    )
    .option('--all', 'replay the whole log from its first event')
    .action((runId: string, o, cmd: Command) => commands.watch(ctx(cmd), runId, o));

  for (const action of ['pause', 'resume', 'cancel'] as const)
    program
      .command(`${action} <runId>`)
      .description(`${action} a run`)
      .action((runId: string, _o, cmd: Command) => commands.control(ctx(cmd), action, runId));
  program
    .command('verify <runId>')
    .description('verify a finished run: each migrated item read back from Jira and compared with its source')
    .action((runId: string, _o, cmd: Command) => commands.verify(ctx(cmd), runId));
  program
    .command('rollback <runId>')
    .description(
      'roll a finished run back: a preview (default: writes nothing), or --confirm to carry it out (owner, admin)',
    )
    .option('--preview', 'read Jira and list what would be deleted (the default)')
    .option('--confirm', "carry out the run's last finished preview: delete its issues from Jira")
    .option('--include-edited', 'the preview deletes issues edited in Jira after the run too')
    .option('--out <file>', 'save the list here (default rollback[-preview]-<runId>.csv, mode 0600)')
    .action((runId: string, o, cmd: Command) => rollback(ctx(cmd), runId, o));
  program
    .command('status <runId>')
    .description("a run's status")
    .action((runId: string, _o, cmd: Command) => commands.status(ctx(cmd), runId));

  program
    .command('report <runId>')
    .description("a run's failure report (default), dry-run preview, id map or verification audit")
    .option('--failures', 'the failure report')
    .option('--preview', "the dry run's preview (JSON)")
    .option('--id-map', 'the source id to Jira key map')
    .option('--verification', "the latest verification's audit")
    .option('--format <format>', 'csv|json')
    .action((runId: string, o, cmd: Command) => commands.report(ctx(cmd), runId, o));

  program
    .command('import-files <runId>')
    .description("a Jira-import run's files: the list, or --batch <n> saved (owner, admin)")
    .option('--batch <n>', 'the batch whose file to print, or save with --out')
    .option('--out <file>', 'save the file here (mode 0600) instead of printing it')
    .action((runId: string, o, cmd: Command) => importFiles(ctx(cmd), runId, o));

  return program;
}

/** One run of `tms` with these arguments, environment and output; resolves to its exit code. */
export async function main(argv: string[], io: CliIo): Promise<number> {
  const outcome: Outcome = { exitCode: EXIT.ok };
  const program = buildProgram(io, outcome);
  try {
    await program.parseAsync(argv, { from: 'user' });
    return outcome.exitCode;
  } catch (err) {
    // Commander has printed its own message (or the help) already.
    if (err instanceof CommanderError) return err.exitCode === 0 ? EXIT.ok : EXIT.usage;
    if (err instanceof ApiError) {
      io.stderr.write(`error: ${err.code ?? 'API error'} (HTTP ${err.status})\n`);
      // The API's messages can quote tracker text (an item title, a Jira error).
      for (const line of err.lines) io.stderr.write(`  ${terminalSafe(line)}\n`);
      return err.exitCode;
    }
    if (err instanceof CliError) {
      for (const line of err.lines) io.stderr.write(`error: ${terminalSafe(line)}\n`);
      return err.exitCode;
    }
    io.stderr.write(`error: ${(err as Error).stack ?? err}\n`);
    return EXIT.failure;
  }
}
