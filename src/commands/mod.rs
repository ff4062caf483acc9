//! One module per subcommand. Each is thin: resolve arguments, call the layers below, render.

pub mod browse;
pub mod completions;
pub mod copy;
pub mod diff;
pub mod dump;
pub mod export;
pub mod find;
pub mod forget;
pub mod gc;
pub mod history;
pub mod import;
pub mod man;
pub mod migrate;
pub mod prune;
pub mod rekey;
pub mod rm;
pub mod show;
pub mod stats;
pub mod store;
pub mod summarize;
pub mod threads;
pub mod tokens;
pub mod trim;
pub mod ttl;

use std::io::Write;
use std::time::Duration;

use anyhow::{bail, Result};

use crate::cli::{Cli, Command, GlobalArgs};
use crate::exit::Usage;
use crate::jobs::{Ctx, NO_DB};

/// Runs the parsed command line, writing data to `out`.
pub fn run(mut cli: Cli, out: &mut dyn Write) -> Result<()> {
    cli.normalize();
    let g = &cli.global;
    crate::output::progress::set_quiet(g.quiet);
    crate::notes::install(crate::output::notes::stderr);
    if g.db.is_none() && !matches!(&cli.command, Command::Completions(_) | Command::Man(_)) {
        return Err(Usage(NO_DB.into()).into());
    }
    // Rewrites say themselves that they work on the root namespace.
    let namespaced = matches!(
        &cli.command,
        Command::History(_)
            | Command::Show(_)
            | Command::Dump(_)
            | Command::Diff(_)
            | Command::Trim(_)
            | Command::Rm(_)
            | Command::Summarize(_)
    ) || matches!(&cli.command, Command::Tokens(t) if t.thread.is_some());
    if !g.ns.is_empty() && !namespaced {
        return Err(Usage(format!(
            "--ns applies to history, show, dump, diff and tokens --thread; this command works on whole threads (drop --ns '{}')",
            g.ns
        ))
        .into());
    }
    // --quiet silences a rewrite's report (cron); a read command still prints the data it was
    // asked for (its notes are what --quiet silences).
    let mut sink = std::io::sink();
    let out: &mut dyn Write = if g.quiet && !cli.command.is_read() {
        &mut sink
    } else {
        out
    };
    // Every byte memctl prints passes the terminal sanitizer here: human text always (a
    // stored id or message holding ESC [2J cannot clear the screen), JSON on a terminal
    // (escaped as \uXXXX, which parses to the same document; pipes get serde_json's bytes).
    use crate::output::sanitize::{Escape, TerminalWriter};
    use std::io::IsTerminal;
    let json = matches!(
        g.format,
        Some(crate::cli::Format::Json | crate::cli::Format::Jsonl)
    ) || matches!(&cli.command, Command::Dump(_));
    let mut guarded;
    let out: &mut dyn Write = if matches!(&cli.command, Command::Completions(_) | Command::Man(_)) {
        out
    } else if !json {
        guarded = TerminalWriter::new(out, Escape::Text);
        &mut guarded
    } else if std::io::stdout().is_terminal() {
        guarded = TerminalWriter::new(out, Escape::Json);
        &mut guarded
    } else {
        out
    };
    match &cli.command {
        Command::Threads(args) => threads::list(g, args.list_args(), out),
        Command::History(args) => history::run(g, args, out),
        Command::Show(args) => show::run(g, args, out),
        Command::Dump(args) => dump::run(g, args, out),
        Command::Diff(args) => diff::run(g, args, out),
        Command::Tokens(args) => tokens::run(g, args, out),
        Command::Trim(args) => trim::run(g, args, out),
        Command::Rm(args) => rm::run(g, args, out),
        Command::Summarize(args) => summarize::run(g, args, out),
        Command::Stats(args) => stats::run(g, args, out),
        Command::Find(args) => find::run(g, args, out),
        Command::Forget(args) => forget::run(g, args, out),
        Command::Prune(args) => prune::run(g, args, out),
        Command::Gc(args) => gc::run(g, args, out),
        Command::Rekey(args) => rekey::run(g, args, out),
        Command::Copy(args) => copy::run(g, args, out),
        Command::Export(args) => export::run(g, args, out),
        Command::Import(args) => import::run(g, args, out),
        Command::Migrate(args) => migrate::run(g, args, out),
        Command::Store(cmd) => store::run(g, cmd, out),
        Command::Ttl(args) => ttl::run(g, args, out),
        Command::Completions(args) => completions::run(args, out),
        Command::Man(args) => man::run(args, out),
        Command::Browse(args) => browse::run(g, args, out),
    }
}

impl GlobalArgs {
    /// The job context these global options describe.
    pub fn ctx(&self) -> Ctx {
        Ctx {
            db: self.db.clone(),
            schema: self.schema.clone(),
            ns: self.ns.clone(),
            busy_timeout: Duration::from_millis(self.busy_timeout),
            key_env: self.key_env.clone(),
            quiet: self.quiet,
            now: self.now.clone(),
        }
    }
}

impl GlobalArgs {
    /// The terminal's sink for a job (`output::notes::Terminal`): notes unless `--quiet`, the
    /// question unless `yes`.
    pub fn sink(&self, yes: bool) -> crate::output::notes::Terminal {
        crate::output::notes::Terminal {
            yes,
            quiet: self.quiet,
        }
    }
}

impl crate::cli::RewriteArgs {
    /// How a rewrite job is asked to run.
    pub fn rewrite(&self) -> crate::jobs::batch::Rewrite {
        crate::jobs::batch::Rewrite {
            dry_run: self.dry_run,
            force: self.force,
            settle: self.settle.clone(),
        }
    }
}

impl crate::cli::TargetArgs {
    /// The threads a rewrite job works on.
    pub fn threads(&self) -> crate::jobs::batch::Threads {
        crate::jobs::batch::Threads {
            thread: self.thread.clone(),
            idle: self.idle.clone(),
            min_messages: self.min_messages,
        }
    }
}

impl crate::cli::MoveChanges {
    /// The changes a move makes to the values on their way.
    pub fn value_changes(&self) -> crate::jobs::copy::ValueChanges {
        crate::jobs::copy::ValueChanges {
            materialize: self.materialize,
            new_key_env: self.new_key_env.clone(),
        }
    }
}

impl crate::cli::CounterArgs {
    /// The counter `--counter` / `--model` choose (a model's framing over `--counter`).
    pub fn choice(&self) -> crate::jobs::tokens::CounterChoice {
        use crate::cli::CounterKind;
        use crate::jobs::tokens::CounterChoice;
        match (&self.model, self.counter) {
            (Some(model), _) => CounterChoice::Model(model.clone()),
            (None, CounterKind::Approx) => CounterChoice::Approx,
            (None, CounterKind::O200k) => CounterChoice::O200k,
            (None, CounterKind::Cl100k) => CounterChoice::Cl100k,
            (None, CounterKind::Usage) => CounterChoice::Usage,
        }
    }
}

/// The counter `--counter` / `--model` name, for a command that measures a window (`usage`
/// is not a counter of messages).
pub fn resolve_counter(args: &crate::cli::CounterArgs) -> Result<crate::tokens::Counter> {
    match args.choice().counter()? {
        Some(counter) => Ok(counter),
        None => bail!("--counter usage reports what the provider billed; it cannot measure a window (use approx, o200k or cl100k)"),
    }
}
