//! The command line: clap definitions only (no I/O here).

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// Inspect and maintain LangGraph checkpoint databases (SQLite files and PostgreSQL).
///
/// memctl reads and rewrites what LangGraph's checkpointers store: the file of
/// langgraph-checkpoint-sqlite (`SqliteSaver`), or the tables of
/// langgraph-checkpoint-postgres (`PostgresSaver`) given as a connection string. List
/// threads, read a thread's history and messages, count tokens, trim, summarize, find and
/// forget. Read commands never create or change anything.
#[derive(Debug, Parser)]
#[command(name = "memctl", version, long_version = crate::version::long_version_str(), about, long_about, max_term_width = 100)]
pub struct Cli {
    /// Options shared by every command.
    #[command(flatten)]
    pub global: GlobalArgs,

    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The command line as `memctl` parses it: `-h` gives each option's first sentence, on one
/// line, and `--help` its whole text (clap shows a one-paragraph doc comment whole for both).
pub fn command() -> clap::Command {
    use clap::CommandFactory;
    shortened(Cli::command())
}

/// `cmd` and its subcommands with [`short_help`] as each option's `-h` text.
fn shortened(cmd: clap::Command) -> clap::Command {
    cmd.mut_args(|a| {
        let Some(help) = a.get_help().map(ToString::to_string) else {
            return a;
        };
        // Room for what clap adds: ` [default: 5000]`, ` [env: MEMCTL_DB]`.
        let extra: usize = a
            .get_default_values()
            .iter()
            .map(|v| v.len() + " [default: ]".len())
            .sum::<usize>()
            + a.get_env().map_or(0, |e| e.len() + " [env: ]".len());
        let short = short_help(&help, SHORT_HELP.saturating_sub(extra).max(24));
        match a.get_long_help().is_none() && short != help {
            true => a.help(short).long_help(help),
            false => a,
        }
    })
    .mut_subcommands(shortened)
}

/// The most characters of an option's `-h` text (it then fits one line beside the option's
/// name on a terminal of 100 columns).
const SHORT_HELP: usize = 60;

/// The first sentence of `help` (up to a `. ` or the end), cut at a word before `most`
/// characters with `…` when it is longer.
fn short_help(help: &str, most: usize) -> String {
    // A sentence ends at a `. ` before a capital letter or a code span (not in `e.g. 7d`).
    let end = help.match_indices(". ").map(|(i, _)| i).find(|&i| {
        help[i + 2..]
            .chars()
            .next()
            .is_some_and(|c| c.is_uppercase() || c == '`' || c == '-')
    });
    let first = end.map_or(help.trim_end_matches('.'), |i| &help[..i]);
    if first.chars().count() <= most {
        return first.to_owned();
    }
    let cut: String = first.chars().take(most - 1).collect();
    let cut = cut.rsplit_once(' ').map_or(cut.as_str(), |(a, _)| a);
    format!("{}…", cut.trim_end_matches([',', ';', ':', '(', ' ']))
}

impl Command {
    /// True for a command that only reads and prints data (`--quiet` silences its notes, never
    /// the data it was asked for); false for the rewrites and maintenance whose report
    /// `--quiet` hides.
    pub fn is_read(&self) -> bool {
        match self {
            Command::Threads(_)
            | Command::History(_)
            | Command::Show(_)
            | Command::Dump(_)
            | Command::Diff(_)
            | Command::Tokens(_)
            | Command::Stats(_)
            | Command::Find(_)
            | Command::Browse(_)
            | Command::Completions(_)
            | Command::Man(_) => true,
            Command::Store(s) => matches!(
                s,
                StoreCommand::Namespaces(_) | StoreCommand::Ls(_) | StoreCommand::Get(_)
            ),
            _ => false,
        }
    }
}

impl Cli {
    /// Folds the threads given as arguments (`memctl copy tools --to-thread x`) into
    /// `--thread`, so that commands read one field.
    pub fn normalize(&mut self) {
        let target = match &mut self.command {
            Command::Trim(a) => Some(&mut a.target),
            Command::Summarize(a) => Some(&mut a.target),
            _ => None,
        };
        if let Some(t) = target {
            if t.thread.is_none() {
                t.thread = t.thread_id.take();
            }
        }
        match &mut self.command {
            Command::Tokens(a) if a.thread.is_none() => a.thread = a.thread_id.take(),
            Command::Gc(a) if a.thread.is_none() => a.thread = a.thread_id.take(),
            Command::Copy(a) if a.thread.is_none() => a.thread = a.thread_id.take(),
            Command::Browse(a) if a.thread.is_none() => a.thread = a.thread_id.take(),
            Command::Prune(a) => a.thread.append(&mut a.thread_ids),
            Command::Forget(a) => a.thread.append(&mut a.thread_ids),
            Command::Export(a) => a.thread.append(&mut a.thread_ids),
            _ => {}
        }
    }
}

/// Options shared by every command (listed after each command's own options).
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Global options")]
pub struct GlobalArgs {
    /// The checkpoint database: the file given to SqliteSaver, or PostgresSaver's connection
    /// string: a postgresql:// (postgres://) URL, SQLAlchemy's postgresql+psycopg:// or
    /// postgresql+psycopg2://, or libpq's keyword form ('host=H port=P user=U password=PW
    /// dbname=D'). Passwords are never printed (nor MEMCTL_DB's value in this help).
    #[arg(
        long,
        env = "MEMCTL_DB",
        hide_env_values = true,
        global = true,
        value_name = "PATH"
    )]
    pub db: Option<PathBuf>,

    /// The PostgreSQL schema that holds the saver's tables, for a saver configured with one
    /// (LangGraph.js's `schema` option); the same as `?schema=NAME` in the URL, which must
    /// not name another. Default: the server's search_path, normally `public`, where
    /// PostgresSaver puts them. Refused with a SQLite file.
    #[arg(long, env = "MEMCTL_SCHEMA", global = true, value_name = "NAME",
          hide_env_values = true, value_parser = parse_schema)]
    pub schema: Option<String>,

    /// Output format: a table for people (the default, on a terminal and in a pipe alike), or
    /// JSON / JSON lines for scripts (`dump` is always JSON).
    #[arg(long, global = true,
          value_parser = clap::builder::TypedValueParser::map(
              clap::builder::EnumValueParser::<FormatArg>::new(), Format::from))]
    pub format: Option<Format>,

    /// Checkpoint namespace: '' is the root graph; subgraphs use 'node:task-id'.
    #[arg(
        long,
        global = true,
        default_value = "",
        value_name = "NS",
        hide_default_value = true
    )]
    pub ns: String,

    /// How long to wait for a database locked by a live app, in milliseconds (at most
    /// 2147483647).
    #[arg(long, global = true, default_value_t = 5000, value_name = "MS",
          value_parser = clap::value_parser!(u64).range(0..=2_147_483_647))]
    pub busy_timeout: u64,

    /// The environment variable that holds the AES key of a database written with
    /// LangGraph's EncryptedSerializer (default: LANGGRAPH_AES_KEY, the one LangGraph reads).
    /// Its UTF-8 bytes are the key, 16, 24 or 32 of them. memctl never prints or stores it.
    #[arg(long, global = true, value_name = "NAME", value_parser = parse_env_name)]
    pub key_env: Option<String>,

    /// Print nothing but errors (for cron): a rewrite's report is hidden, and threads that
    /// failed or whose change did not take effect are still named on stderr, with why; a
    /// read command prints its data and no notes.
    #[arg(long, short = 'q', global = true)]
    pub quiet: bool,

    /// The time to measure ages against (RFC 3339), for reproducible output.
    #[arg(long, global = true, hide = true, value_name = "TS")]
    pub now: Option<String>,
}

/// Output formats (defined by the output layer, which must not know the command line).
pub use crate::output::Format;

/// The values of `--format`, mapped onto the output layer's [`Format`] as they are parsed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FormatArg {
    /// Aligned table / readable text.
    Table,
    /// One JSON document.
    Json,
    /// One JSON object per line.
    Jsonl,
}

impl From<FormatArg> for Format {
    fn from(f: FormatArg) -> Format {
        match f {
            FormatArg::Table => Format::Table,
            FormatArg::Json => Format::Json,
            FormatArg::Jsonl => Format::Jsonl,
        }
    }
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Work with threads (conversations).
    #[command(after_help = "Examples:
  memctl threads list --db checkpoints.sqlite
  memctl threads list --sort size --limit 20
  memctl threads list --min-tokens 8000 --format json
  memctl threads --meta user_id=42")]
    Threads(ThreadsArgs),

    /// List a thread's checkpoints, newest first.
    #[command(after_help = "Examples:
  memctl history --db checkpoints.sqlite --thread 42
  memctl history --thread 42 --limit 5
  memctl history --thread 42 --format json | jq '.[0].checkpoint_id'")]
    History(HistoryArgs),

    /// Show a thread's state the way a person reads a chat.
    #[command(after_help = "Examples:
  memctl show --db checkpoints.sqlite --thread 42
  memctl show --thread 42 --checkpoint 1f1ed47f-8372-63a9-8008-693bc35ab911
  memctl show 42 --last 6
  memctl show --thread 42 | less")]
    Show(ShowArgs),

    /// Print a thread's messages as LangChain's model_dump() dictionaries.
    #[command(after_help = "Examples:
  memctl dump --db checkpoints.sqlite --thread 42 > messages.json
  memctl dump --thread 42 --format jsonl | jq -r .content
  memctl dump --thread 42 --raw")]
    Dump(DumpArgs),

    /// Show what changed between two checkpoints of a thread.
    #[command(after_help = "Examples:
  memctl diff --db checkpoints.sqlite --thread 42
  memctl diff --thread 42 --from 1f1ed47f-8128-6334-8004-2b6b0a62df59")]
    Diff(DiffArgs),

    /// Count a thread's tokens (per message), or every thread's (--all).
    #[command(after_help = "Examples:
  memctl tokens --db checkpoints.sqlite --thread 42
  memctl tokens --all --model gpt-4o --limit 20
  memctl tokens --thread 42 --counter usage")]
    Tokens(TokensArgs),

    /// Trim threads to their newest messages (appends a checkpoint, like update_state).
    #[command(after_help = "Examples:
  memctl trim --db checkpoints.sqlite --thread 42 --keep 6 --dry-run
  memctl trim --thread 42 --max-tokens 4000 --model gpt-4o
  memctl trim --all --idle 7d --min-messages 40 --keep 10 --quiet")]
    Trim(TrimArgs),

    /// Remove messages from a thread (appends a checkpoint; --purge also scrubs history).
    #[command(after_help = "Examples:
  memctl rm --db checkpoints.sqlite --thread 42 --index -1 --dry-run
  memctl rm --thread 42 --match 'hunter2' --purge
  memctl rm --thread 42 --type tool")]
    Rm(RmArgs),

    /// Summarize the older messages of threads through a model endpoint (OpenAI-compatible).
    #[command(after_help = "Examples:
  memctl summarize --db checkpoints.sqlite --thread 42 --keep 6 --dry-run
  OPENAI_API_KEY=… memctl summarize --all --idle 3d --min-tokens 8000 --keep 6 \\
      --endpoint https://api.openai.com/v1 --model gpt-4o-mini
  memctl summarize --thread 42 --keep 4 --summary-key summary \\
      --endpoint http://localhost:11434/v1 --model llama3.2:1b")]
    Summarize(SummarizeArgs),

    /// Find the conversations that mention something (message text, tool calls, string state).
    #[command(after_help = "Examples:
  memctl find --db checkpoints.sqlite 'order-1234'
  memctl find -i --regex 'hunter\\d' --history
  memctl find --meta user_id=42 --format json
  memctl find refund --count")]
    Find(FindArgs),

    /// Erase a person's data from the whole database, with proof: delete their threads
    /// (--thread, --meta) and scrub what --match matches from every other thread's history;
    /// then zero the freed space, search every byte for what was erased, and print a receipt.
    #[command(after_help = "Examples:
  memctl forget --db checkpoints.sqlite --meta user_id=42 --dry-run
  memctl forget --meta user_id=42 --match alice@example.com --receipt erasure-42.json
  memctl forget --thread t-17 --thread t-18
  memctl forget -i --regex --match 'alice|555-0100' --force")]
    Forget(ForgetArgs),

    /// What takes the space: file, WAL, free pages, largest threads, bytes per channel, orphans.
    #[command(after_help = "Examples:
  memctl stats --db checkpoints.sqlite
  memctl stats --top 20 --format json")]
    Stats(StatsArgs),

    /// Delete whole threads: idle ones (--idle 30d) or named ones (--thread T).
    #[command(after_help = "Examples:
  memctl prune --db checkpoints.sqlite --idle 30d --dry-run
  memctl prune --idle 30d --vacuum --quiet
  memctl prune --thread 42 --thread 43")]
    Prune(PruneArgs),

    /// Delete old checkpoints inside threads, keeping each thread resumable as before.
    #[command(after_help = "Examples:
  memctl gc --db checkpoints.sqlite --all --keep-checkpoints 5 --dry-run
  memctl gc --all --keep-checkpoints 5 --vacuum --quiet
  memctl gc --thread 42 --keep-checkpoints 1")]
    Gc(GcArgs),

    /// Re-encrypt every stored value: rotate the AES key, encrypt a plain database, or
    /// decrypt one (--decrypt). Rewrites rows in place, a short transaction at a time; run it
    /// again after an interruption to finish.
    #[command(after_help = "Examples:
  memctl rekey --db checkpoints.sqlite --old-key-env OLD_AES_KEY --new-key-env LANGGRAPH_AES_KEY --dry-run
  memctl rekey --old-key-env OLD_AES_KEY --new-key-env LANGGRAPH_AES_KEY
  memctl rekey --new-key-env LANGGRAPH_AES_KEY
  memctl rekey --decrypt --old-key-env LANGGRAPH_AES_KEY")]
    Rekey(RekeyArgs),

    // ---- threads that travel (#29) ----
    /// Copy a thread, whole or up to a checkpoint (a fork), to a new thread id in the same
    /// database or into another one (a SQLite file or a PostgreSQL URL; a file that does not
    /// exist is created in SqliteSaver's layout). The copy is written in one transaction,
    /// exactly as the target's saver would write it: every checkpoint of every namespace, the
    /// pending writes, the same checkpoint ids; encrypted rows as they are stored.
    #[command(after_help = "Examples:
  memctl copy --thread chat-1 --to-thread chat-1-copy
  memctl copy --thread chat-1 --to-thread chat-1-retry --at 1f0c1a2b-3c4d-6e5f-8001-0a1b2c3d4e5f
  memctl copy --thread chat-1 --to debug.sqlite
  memctl copy --thread chat-1 --to postgresql://app@db/prod --to-thread chat-1 --dry-run
  memctl copy --all --idle 90d --to archive.sqlite
  memctl copy --all --meta user_id=42 --to postgresql://app@db/prod")]
    Copy(CopyArgs),

    /// Export threads to a portable archive: a new SQLite file in SqliteSaver's layout, which
    /// LangGraph opens itself (`SqliteSaver.from_conn_string`). `--redact` replaces what its
    /// patterns match in every message, tool-call argument, channel value, pending write and
    /// metadata value with `[erased]`; the archive is then searched byte by byte, and kept only
    /// when no match is left.
    #[command(after_help = "Examples:
  memctl export --thread chat-1 -o chat-1.sqlite
  memctl export --thread chat-1 -o for-support.sqlite --redact '[\\w.+-]+@[\\w-]+\\.[\\w.]+' --redact 'sk-[A-Za-z0-9]{20,}'
  memctl export --all -o archive.sqlite --force")]
    Export(ExportArgs),

    /// Import threads from a SQLite file (an export, or any SqliteSaver file) into --db: a
    /// copy the other way, one transaction per thread.
    #[command(after_help = "Examples:
  memctl import chat-1.sqlite --db app.sqlite
  memctl import archive.sqlite --db postgresql://app@db/prod --thread chat-1 --to-thread chat-1-restored")]
    Import(ImportArgs),

    /// Migrate the whole database (every thread) into another one of either backend: a
    /// SQLite file (created in SqliteSaver's 3.x layout when it does not exist, else written in
    /// its own generation) or a PostgreSQL database (its saver's tables, in their layout). One
    /// transaction per thread; resumable: threads already there and equal are skipped, a
    /// thread that differs is reported and left as it is unless --replace. A thread new to the
    /// target is streamed a checkpoint at a time (memory follows the largest checkpoint); one
    /// already there (compared, replaced) and every thread under --materialize is read whole
    /// into memory.
    #[command(after_help = "Examples:
  memctl migrate --db app.sqlite --to postgresql://app@db/prod --dry-run
  memctl migrate --db app.sqlite --to postgresql://app@db/prod
  memctl migrate --db postgresql://app@db/prod --to local.sqlite")]
    Migrate(MigrateArgs),

    /// The LangGraph Store (long-term memory: `store.put` items): list namespaces and items,
    /// read one, delete items, sweep expired ones. Reads never refresh a TTL.
    #[command(after_help = "Examples:
  memctl store namespaces --db app.sqlite
  memctl store namespaces --prefix users --max-depth 2 --format json
  memctl store ls users.u-42.memories
  memctl store get users.u-42.memories food
  memctl store rm users.u-42.memories food pet --dry-run
  memctl store sweep --dry-run

NAMESPACE is the namespace's labels joined with '.', as the store's tables keep it:
('users', 'u-42', 'memories') is users.u-42.memories. A label never contains '.' (LangGraph
refuses one), so this is never ambiguous.")]
    #[command(subcommand)]
    Store(StoreCommand),

    /// Apply the TTL policy a LangGraph deployment declares in its langgraph.json
    /// (checkpointer.ttl, store.ttl) to a self-hosted database, from cron: threads idle longer
    /// than default_ttl are pruned (strategy delete) or collected to their latest checkpoint
    /// (keep_latest), and the store's expired items are swept.
    #[command(after_help = "Examples:
  memctl ttl --config langgraph.json --db checkpoints.sqlite --dry-run
  memctl ttl --config langgraph.json --quiet")]
    Ttl(TtlArgs),

    /// Print a shell completion script.
    #[command(after_help = "Examples:
  memctl completions bash > ~/.local/share/bash-completion/completions/memctl
  memctl completions zsh > \"${fpath[1]}/_memctl\"")]
    Completions(CompletionsArgs),

    /// Write man pages: memctl.1 and one page per command (memctl-threads-list.1, …).
    #[command(after_help = "Examples:
  memctl man ~/.local/share/man/man1
  memctl man man")]
    Man(ManArgs),

    /// Browse threads, history, checkpoints and the Store in a full-screen terminal UI
    /// (read-only: actions are shown as memctl commands, never run).
    #[command(after_help = "Examples:
  memctl browse --db checkpoints.sqlite
  memctl browse --db postgresql://app@db.internal/app

Keys: arrows or j/k move, Enter opens, Esc or q goes back (q on the threads view quits),
/ filters threads (by id, or KEY=VALUE metadata), s sorts, f searches messages, S opens the
Store, a lists the commands that would change the selected thread (shown, never run),
? lists every key.")]
    Browse(BrowseArgs),
}

/// Token counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CounterKind {
    /// LangChain's count_tokens_approximately (default parameters).
    Approx,
    /// tiktoken o200k_base with langchain_openai's chat framing (gpt-4o, gpt-4.1, gpt-5, o1, o3).
    O200k,
    /// tiktoken cl100k_base with langchain_openai's chat framing (gpt-4, gpt-3.5-turbo).
    Cl100k,
    /// What the provider billed: usage_metadata of the AI messages (tokens command only).
    Usage,
}

/// How to count tokens.
#[derive(Debug, Args)]
pub struct CounterArgs {
    /// The token counter.
    #[arg(long, value_enum, default_value_t = CounterKind::Approx)]
    pub counter: CounterKind,

    /// Count as langchain_openai does for this model (gpt-4o → o200k, gpt-4 → cl100k…);
    /// overrides --counter.
    #[arg(long, value_name = "NAME")]
    pub model: Option<String>,
}

/// Arguments of `tokens`.
#[derive(Debug, Args)]
pub struct TokensArgs {
    /// The thread to count, message by message.
    #[arg(
        long,
        short = 't',
        value_name = "ID",
        required_unless_present_any = ["all", "thread_id"],
        conflicts_with = "all"
    )]
    pub thread: Option<String>,

    /// The thread to count, without --thread.
    #[arg(value_name = "THREAD", conflicts_with_all = ["thread", "all"])]
    pub thread_id: Option<String>,

    /// Count every thread (its latest state), one row per thread, largest first.
    #[arg(long)]
    pub all: bool,

    /// With --all: show at most this many threads.
    #[arg(long, value_name = "N", requires = "all")]
    pub limit: Option<usize>,

    /// With --all: the order (`thread`: thread-id order). Threads are counted a batch at a
    /// time: `--sort thread` with `--format json`/`jsonl` writes each row as it is counted (and
    /// stops at --limit); sorted by tokens, and as a table (its widths need every row), the
    /// list is written once every thread is counted, its rows waiting in a temporary file (32
    /// bytes per thread in memory).
    #[arg(long, value_enum, default_value_t = TokensSort::Tokens, requires = "all")]
    pub sort: TokensSort,

    /// With --all: read connections at once: the threads' latest checkpoints are read in
    /// batches of 64 on up to N connections (one per 3 batches at most), each batch decoded
    /// on the thread that read it, and merged back in order: the output is the same as with one (on
    /// PostgreSQL every connection reads in the first one's snapshot). Default: on PostgreSQL
    /// the server's max_parallel_workers_per_gather + 1, at most this machine's cores; on a
    /// SQLite file 1 (its reads already run beside the decoding).
    #[arg(long, value_name = "N", value_parser = parse_jobs, requires = "all")]
    pub jobs: Option<usize>,

    /// The counter.
    #[command(flatten)]
    pub counter: CounterArgs,
}

/// Which threads a rewrite touches.
#[derive(Debug, Args)]
pub struct TargetArgs {
    /// Rewrite this thread.
    #[arg(
        long,
        short = 't',
        value_name = "ID",
        required_unless_present_any = ["all", "thread_id"],
        conflicts_with = "all"
    )]
    pub thread: Option<String>,

    /// The thread to rewrite, without --thread.
    #[arg(value_name = "THREAD", conflicts_with_all = ["thread", "all"])]
    pub thread_id: Option<String>,

    /// Rewrite every thread that passes the filters (threads waiting on work are skipped).
    #[arg(long)]
    pub all: bool,

    /// With --all: only threads not updated for this long (e.g. 7d, 12h, 90m).
    #[arg(long, value_name = "DUR", requires = "all", conflicts_with_all = ["thread", "thread_id"],
          value_parser = parse_duration)]
    pub idle: Option<String>,

    /// With --all: only threads with at least this many messages.
    #[arg(long, value_name = "N", requires = "all", conflicts_with_all = ["thread", "thread_id"])]
    pub min_messages: Option<usize>,
}

/// Options of every rewrite.
#[derive(Debug, Args)]
pub struct RewriteArgs {
    /// Show what would change and write nothing.
    #[arg(long, short = 'n')]
    pub dry_run: bool,

    /// Rewrite even a thread that is waiting on an interrupt or has pending work
    /// (its waiting node runs again on the next invoke).
    #[arg(long)]
    pub force: bool,

    /// After writing, wait this long (e.g. 1s, 0s) and check that no live app committed a
    /// newer checkpoint on an edited thread; such an edit is reported `superseded` (the app's
    /// turn wins; memctl's edit is not in effect) and the exit code is 3. No wait when no app
    /// had the file open (a WAL-mode file without its -wal file).
    #[arg(long, default_value = "1s", value_name = "DURATION", value_parser = parse_settle)]
    pub settle: String,
}

/// Arguments of `trim`.
#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("limit").required(true).multiple(false).args(["keep", "max_tokens"])))]
pub struct TrimArgs {
    /// The threads.
    #[command(flatten)]
    pub target: TargetArgs,

    /// Keep the last N messages (a leading system message counts as one, as in LangChain's
    /// trim_messages with token_counter=len). At least 1: to clear a thread, use
    /// `memctl rm --all-messages`.
    #[arg(long, value_name = "N", value_parser = parse_keep)]
    pub keep: Option<u64>,

    /// Keep the last messages that fit in N tokens (by --counter / --model; approximate by
    /// default).
    #[arg(long, value_name = "N")]
    pub max_tokens: Option<u64>,

    /// The counter for --max-tokens.
    #[command(flatten)]
    pub counter: CounterArgs,

    /// Also keep the first non-system message (often the user's name and goal).
    #[arg(long)]
    pub keep_first: bool,

    /// Rewrite options.
    #[command(flatten)]
    pub rewrite: RewriteArgs,
}

/// Message kinds for `rm --type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum KindArg {
    /// HumanMessage.
    Human,
    /// AIMessage.
    Ai,
    /// ToolMessage.
    Tool,
    /// SystemMessage.
    System,
}

/// Arguments of `rm`.
#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("selector").required(true).multiple(true).args(["id", "index", "kind", "pattern", "all_messages"])))]
pub struct RmArgs {
    /// The thread.
    #[command(flatten)]
    pub thread: ThreadArg,

    /// Remove the message with this id (repeatable).
    #[arg(long = "id", value_name = "ID")]
    pub id: Vec<String>,

    /// Remove the message at this position; negative counts from the end (-1 = last).
    #[arg(long, value_name = "I", allow_negative_numbers = true)]
    pub index: Vec<i64>,

    /// Remove every message of this kind (repeatable).
    #[arg(long = "type", value_enum, value_name = "KIND")]
    pub kind: Vec<KindArg>,

    /// Remove every message that matches this regular expression: its text, or the name or
    /// JSON arguments of one of its tool calls.
    #[arg(long = "match", value_name = "REGEX", value_parser = parse_regex)]
    pub pattern: Option<String>,

    /// Remove every message (clear the conversation).
    #[arg(long)]
    pub all_messages: bool,

    /// Also scrub the removed messages from every older checkpoint and write of the thread,
    /// then zero the freed space, so their text is gone from the file (for secrets).
    #[arg(long)]
    pub purge: bool,

    /// With --purge, on a terminal, do not ask before writing (the question is only asked
    /// when stdin and stdout are a terminal; never in a dry run, a pipe or cron).
    #[arg(long, short = 'y')]
    pub yes: bool,

    /// Rewrite options.
    #[command(flatten)]
    pub rewrite: RewriteArgs,
}

/// Arguments of `threads`: a subcommand, or none to list (`memctl threads` is `memctl threads
/// list`, with the same options).
#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct ThreadsArgs {
    /// What to do with the threads (default: list them).
    #[command(subcommand)]
    pub command: Option<ThreadsCommand>,

    /// `threads list`'s options, given without `list`.
    #[command(flatten)]
    pub list: ThreadsListArgs,
}

impl ThreadsArgs {
    /// The `list` options in effect: the subcommand's, or those given without it.
    pub fn list_args(&self) -> &ThreadsListArgs {
        match &self.command {
            Some(ThreadsCommand::List(args)) => args,
            None => &self.list,
        }
    }
}

/// `threads` subcommands.
#[derive(Debug, Subcommand)]
pub enum ThreadsCommand {
    /// One row per thread: checkpoints, messages, last step, last update, size.
    List(ThreadsListArgs),
}

/// Arguments of `threads list`.
#[derive(Debug, Args)]
pub struct ThreadsListArgs {
    /// Sort order (largest / newest first; `thread`: thread-id order). Threads are read a
    /// batch at a time: `--sort thread` with `--format json`/`jsonl` writes each row as it is
    /// read (and stops at --limit); a sorted list, and a table (its widths need every row), is
    /// written once every thread is read, its rows waiting in a temporary file (32 bytes per
    /// thread in memory).
    #[arg(long, value_enum, default_value_t = ThreadSort::Updated)]
    pub sort: ThreadSort,

    /// Show at most this many threads.
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,

    /// Only threads whose latest state has at least this many tokens (approximate counter).
    #[arg(long, value_name = "N")]
    pub min_tokens: Option<u64>,

    /// Only threads whose metadata (the configurable keys the app passed, in any of their
    /// checkpoints) or latest state channel KEY equals VALUE; repeat to require several. The
    /// threads `forget --meta` would delete.
    #[arg(long, value_name = "KEY=VALUE", value_parser = parse_meta)]
    pub meta: Vec<String>,

    /// Read connections at once: the threads' latest checkpoints are read in batches of
    /// 64 on up to N connections (one per 3 batches at most), each batch decoded on the thread
    /// that read it, and merged back in order: the output is the same as with one (on
    /// PostgreSQL every connection reads in the first one's snapshot). Default: on PostgreSQL
    /// the server's max_parallel_workers_per_gather + 1, at most this machine's cores; on a
    /// SQLite file 1 (its reads already run beside the decoding).
    #[arg(long, value_name = "N", value_parser = parse_jobs)]
    pub jobs: Option<usize>,
}

/// Sort keys for `threads list`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ThreadSort {
    /// Most recently updated first.
    Updated,
    /// Largest stored size first.
    Size,
    /// Most messages first.
    Messages,
    /// Most checkpoints first.
    Checkpoints,
    /// Most tokens first (approximate counter).
    Tokens,
    /// Thread-id order (the primary key's, bytewise): rows are written as they are read.
    Thread,
}

/// Sort keys for `tokens --all`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TokensSort {
    /// Most tokens first (ties in thread-id order).
    Tokens,
    /// Thread-id order (the primary key's, bytewise): rows are written as they are read.
    Thread,
}

/// Names a thread: `--thread ID`, or the id alone (`memctl show tools`).
#[derive(Debug, Clone)]
pub struct ThreadArg {
    /// The thread id (`configurable.thread_id`).
    pub thread: String,
}

impl clap::FromArgMatches for ThreadArg {
    fn from_arg_matches(m: &clap::ArgMatches) -> Result<Self, clap::Error> {
        let given = m
            .get_one::<String>("thread")
            .or_else(|| m.get_one::<String>("thread_id"))
            .cloned();
        match given {
            Some(thread) => Ok(ThreadArg { thread }),
            None => Err(clap::Error::raw(
                clap::error::ErrorKind::MissingRequiredArgument,
                "a thread is required: give it as --thread ID or as the first argument\n",
            )),
        }
    }

    fn update_from_arg_matches(&mut self, m: &clap::ArgMatches) -> Result<(), clap::Error> {
        *self = ThreadArg::from_arg_matches(m)?;
        Ok(())
    }
}

impl clap::Args for ThreadArg {
    fn augment_args(cmd: clap::Command) -> clap::Command {
        cmd.arg(
            clap::Arg::new("thread")
                .long("thread")
                .short('t')
                .value_name("ID")
                .help("The thread id (`configurable.thread_id`)"),
        )
        .arg(
            clap::Arg::new("thread_id")
                .value_name("THREAD")
                .help("The thread id, without --thread")
                .conflicts_with("thread"),
        )
        .group(
            clap::ArgGroup::new("which_thread")
                .args(["thread", "thread_id"])
                .required(true),
        )
    }

    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        ThreadArg::augment_args(cmd)
    }
}

/// Arguments of `history`.
#[derive(Debug, Args)]
pub struct HistoryArgs {
    /// The thread.
    #[command(flatten)]
    pub thread: ThreadArg,

    /// Show only the newest N checkpoints (after --source and --before, as
    /// `get_state_history(limit=)`).
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,

    /// Only checkpoints whose metadata `source` is SRC (`input`, `loop`, `update`, `fork`), as
    /// `get_state_history(config, filter={"source": SRC})`.
    #[arg(long, value_name = "SRC")]
    pub source: Option<String>,

    /// Only checkpoints older than this one (its id sorts after theirs; a unique prefix will
    /// do), as `get_state_history(config, before=...)`.
    #[arg(long, value_name = "ID")]
    pub before: Option<String>,
}

/// Arguments of `show`.
#[derive(Debug, Args)]
pub struct ShowArgs {
    /// The thread.
    #[command(flatten)]
    pub thread: ThreadArg,

    /// The checkpoint to show (default: the latest; a unique prefix of its id will do).
    #[arg(long, value_name = "ID")]
    pub checkpoint: Option<String>,

    /// Show only the last N messages (the state's other channels and what it waits on are
    /// shown in full).
    #[arg(long, value_name = "N")]
    pub last: Option<usize>,
}

/// Arguments of `dump`.
#[derive(Debug, Args)]
pub struct DumpArgs {
    /// The thread.
    #[command(flatten)]
    pub thread: ThreadArg,

    /// The checkpoint to dump (default: the latest).
    #[arg(long, value_name = "ID")]
    pub checkpoint: Option<String>,

    /// Print the whole decoded checkpoint (channels, versions, metadata, pending writes)
    /// instead of the messages.
    #[arg(long)]
    pub raw: bool,
}

/// Arguments of `diff`.
#[derive(Debug, Args)]
pub struct DiffArgs {
    /// The thread.
    #[command(flatten)]
    pub thread: ThreadArg,

    /// The older checkpoint (default: the parent of --to).
    #[arg(long, value_name = "ID")]
    pub from: Option<String>,

    /// The newer checkpoint (default: the latest).
    #[arg(long, value_name = "ID")]
    pub to: Option<String>,
}

/// Arguments of `completions`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to write completions for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// Arguments of `man`.
#[derive(Debug, Args)]
pub struct ManArgs {
    /// The directory to write the pages into; existing pages of the same names are replaced.
    /// A missing DIR is created when its parent exists (and memctl says so); a DIR whose
    /// parent is missing is refused, nothing created.
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
}

/// Arguments of `summarize`.
#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("window").required(true).multiple(false).args(["keep", "keep_tokens"])))]
pub struct SummarizeArgs {
    /// The threads.
    #[command(flatten)]
    pub target: TargetArgs,

    /// With --all: only threads whose state has at least this many tokens (by --counter).
    #[arg(long, value_name = "N", requires = "all")]
    pub min_tokens: Option<u64>,

    /// Keep the last N messages verbatim (as `trim --keep`); older ones are summarized.
    #[arg(long, value_name = "N")]
    pub keep: Option<u64>,

    /// Keep the last messages that fit in N tokens verbatim; older ones are summarized.
    #[arg(long, value_name = "N")]
    pub keep_tokens: Option<u64>,

    /// The counter for --keep-tokens and --min-tokens (approx, o200k or cl100k).
    #[arg(long, value_enum, default_value_t = CounterKind::Approx)]
    pub counter: CounterKind,

    /// The OpenAI-compatible API base URL, http or https (e.g. http://localhost:11434/v1).
    /// Redirects are not followed; credentials in it are never printed.
    #[arg(long, value_name = "URL", required_unless_present = "dry_run")]
    pub endpoint: Option<String>,

    /// The model the endpoint should use for summaries.
    #[arg(long, value_name = "NAME", required_unless_present = "dry_run")]
    pub model: Option<String>,

    /// The environment variable holding the API key (sent as a bearer token, never printed).
    #[arg(long, value_name = "VAR", default_value = "OPENAI_API_KEY")]
    pub api_key_env: String,

    /// Requests in flight at once.
    #[arg(long, value_name = "K", default_value_t = 4)]
    pub concurrency: usize,

    /// Seconds to wait for one answer.
    #[arg(long, value_name = "SECS", default_value_t = 120)]
    pub timeout: u64,

    /// Retries after a 429, a 5xx, a timeout or a connection error (with backoff).
    #[arg(long, value_name = "N", default_value_t = 3)]
    pub retries: u32,

    /// The most transcript one request carries (approximate tokens). A longer one is
    /// summarized in parts and then the part summaries are summarized (map-reduce): nothing
    /// is left out.
    #[arg(long, value_name = "N", default_value_t = 12_000, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_input_tokens: u64,

    /// A prompt template to use instead of memctl's (at most 1 MiB); `{messages}` marks the
    /// transcript.
    #[arg(long, value_name = "FILE")]
    pub prompt_file: Option<std::path::PathBuf>,

    /// Store the summary in this state channel (e.g. `summary`) instead of a summary message;
    /// an existing value is fed into the next summary.
    #[arg(long, value_name = "KEY")]
    pub summary_key: Option<String>,

    /// Write --summary-key even where the thread has no such channel yet (the graph must
    /// declare it: LangGraph reads only the channels of its state schema).
    #[arg(long, requires = "summary_key")]
    pub new_key: bool,

    /// Rewrite options.
    #[command(flatten)]
    pub rewrite: RewriteArgs,
}

/// Arguments of `find`.
#[derive(Debug, Args)]
pub struct FindArgs {
    /// The text to look for (a literal unless --regex).
    #[arg(value_name = "PATTERN")]
    pub pattern: Option<String>,

    /// PATTERN is a regular expression (Rust regex syntax).
    #[arg(long, short = 'e')]
    pub regex: bool,

    /// Match without regard to case.
    #[arg(long, short = 'i')]
    pub ignore_case: bool,

    /// Only threads whose metadata (incl. the configurable keys the app passed) or state
    /// channel KEY equals VALUE; repeat to require several. Alone, lists those threads.
    #[arg(long, value_name = "KEY=VALUE", value_parser = parse_meta)]
    pub meta: Vec<String>,

    /// Search every checkpoint of each thread, not only its latest state.
    #[arg(long)]
    pub history: bool,

    /// Search one thread only.
    #[arg(long, short = 't', value_name = "ID")]
    pub thread: Option<String>,

    /// Print how many hits each thread has instead of the hits.
    #[arg(long)]
    pub count: bool,

    /// Read connections at once: the threads' latest checkpoints are read in batches of
    /// 64 on up to N connections (one per 3 batches at most), each batch decoded on the thread
    /// that read it, and merged back in order: the output is the same as with one (on
    /// PostgreSQL every connection reads in the first one's snapshot). Default: on PostgreSQL
    /// the server's max_parallel_workers_per_gather + 1, at most this machine's cores; on a
    /// SQLite file 1 (its reads already run beside the decoding).
    #[arg(long, value_name = "N", value_parser = parse_jobs)]
    pub jobs: Option<usize>,
}

/// Arguments of `forget`.
#[derive(Debug, Args)]
pub struct ForgetArgs {
    /// Delete this thread (repeatable): all its namespaces, checkpoints and writes, as
    /// `prune` does. A thread already gone is reported, so a second run finishes the job.
    #[arg(long, short = 't', value_name = "ID")]
    pub thread: Vec<String>,

    /// Threads to delete, without --thread.
    #[arg(value_name = "THREAD")]
    pub thread_ids: Vec<String>,

    /// Delete every thread whose metadata (the configurable keys the app passed) or latest
    /// state has KEY equal to VALUE (repeat to require several), as `find --meta` finds them.
    #[arg(long, value_name = "KEY=VALUE", value_parser = parse_meta)]
    pub meta: Vec<String>,

    /// Across every other thread, remove the messages whose text or tool calls match (with
    /// their tool-call partners) from the latest state and every older checkpoint and
    /// pending write, and replace the match by `[erased]` wherever else it stands (summaries,
    /// other state channels, tool-call arguments). A literal unless --regex.
    #[arg(long = "match", value_name = "PATTERN")]
    pub pattern: Option<String>,

    /// --match is a regular expression (Rust regex syntax).
    #[arg(long, short = 'e', requires = "pattern")]
    pub regex: bool,

    /// --match without regard to case.
    #[arg(long, short = 'i', requires = "pattern")]
    pub ignore_case: bool,

    /// Also write the receipt to this file, as JSON (it holds digests, never the erased
    /// text). Not written in a dry run.
    #[arg(long, value_name = "FILE")]
    pub receipt: Option<PathBuf>,

    /// On a terminal, do not ask before writing (the question is only asked when stdin and
    /// stdout are a terminal; never in a dry run, a pipe or cron).
    #[arg(long, short = 'y')]
    pub yes: bool,

    /// Rewrite options.
    #[command(flatten)]
    pub rewrite: RewriteArgs,
}

/// Arguments of `stats`.
#[derive(Debug, Args)]
pub struct StatsArgs {
    /// How many of the largest threads to list.
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub top: usize,
}

/// Options of maintenance commands run beside a live app.
#[derive(Debug, Args)]
pub struct MaintenanceArgs {
    /// Leave alone threads written more recently than this (a live app may be using them).
    #[arg(long, value_name = "DUR", default_value = "5m", value_parser = parse_duration)]
    pub min_idle: String,

    /// Show what would be deleted and delete nothing.
    #[arg(long, short = 'n')]
    pub dry_run: bool,

    /// On a terminal, do not ask before writing (the question is only asked when stdin and
    /// stdout are a terminal; never in a dry run, a pipe or cron).
    #[arg(long, short = 'y')]
    pub yes: bool,

    /// Afterwards VACUUM and truncate the WAL so the file really shrinks (it holds the write
    /// lock while it rebuilds the file: exit code 3, nothing lost, if an app keeps the database
    /// busy or has a file over 64 MiB open).
    #[arg(long)]
    pub vacuum: bool,
}

/// Arguments of `prune`.
#[derive(Debug, Args)]
pub struct PruneArgs {
    /// Delete every thread whose latest checkpoint is older than this (e.g. 30d, 12h). With
    /// --thread, only the named threads that are this idle.
    #[arg(long, value_name = "DUR", required_unless_present_any = ["thread", "thread_ids"],
          value_parser = parse_duration)]
    pub idle: Option<String>,

    /// Delete this thread (repeatable), in all namespaces, like SqliteSaver.delete_thread.
    /// With --idle, only if it is idle that long.
    #[arg(long, short = 't', value_name = "ID")]
    pub thread: Vec<String>,

    /// Threads to delete, without --thread.
    #[arg(value_name = "THREAD")]
    pub thread_ids: Vec<String>,

    /// Threads per transaction (short transactions keep the app's waits short).
    #[arg(long, value_name = "N", default_value_t = 200)]
    pub batch: usize,

    /// Maintenance options.
    #[command(flatten)]
    pub maintenance: MaintenanceArgs,
}

/// Arguments of `ttl`.
#[derive(Debug, Args)]
pub struct TtlArgs {
    /// The deployment's langgraph.json (its checkpointer.ttl and store.ttl are read; the rest
    /// is ignored).
    #[arg(long, value_name = "FILE")]
    pub config: PathBuf,

    /// Show what would be deleted and delete nothing.
    #[arg(long, short = 'n')]
    pub dry_run: bool,

    /// On a terminal, do not ask before the prune or gc part deletes (the question is only
    /// asked when stdin and stdout are a terminal; never in a dry run, a pipe or cron).
    #[arg(long, short = 'y')]
    pub yes: bool,
}

/// Arguments of `gc`.
#[derive(Debug, Args)]
pub struct GcArgs {
    /// Collect this thread.
    #[arg(
        long,
        short = 't',
        value_name = "ID",
        required_unless_present_any = ["all", "thread_id"],
        conflicts_with = "all"
    )]
    pub thread: Option<String>,

    /// The thread to collect, without --thread.
    #[arg(value_name = "THREAD", conflicts_with_all = ["thread", "all"])]
    pub thread_id: Option<String>,

    /// Collect every thread.
    #[arg(long)]
    pub all: bool,

    /// Checkpoints to keep per thread and namespace, newest first (at least 1: the latest).
    /// Required: everything older is deleted, and that history (time travel, `memctl diff`)
    /// cannot be brought back; 1 keeps only the state the app resumes from.
    #[arg(long, value_name = "N", required = true, value_parser = clap::value_parser!(u64).range(1..))]
    pub keep_checkpoints: u64,

    /// Maintenance options.
    #[command(flatten)]
    pub maintenance: MaintenanceArgs,
}

/// Arguments of `rekey`.
#[derive(Debug, Args)]
pub struct RekeyArgs {
    /// The environment variable holding the key the values are encrypted with now (their
    /// UTF-8 bytes, as LangGraph reads LANGGRAPH_AES_KEY). Values under it are re-encrypted
    /// with the new key, or decrypted with --decrypt.
    #[arg(long, value_name = "NAME", value_parser = parse_env_name)]
    pub old_key_env: Option<String>,

    /// The environment variable holding the key to encrypt with. Plain values are encrypted
    /// with it too; values already under it are left alone, so a run that was interrupted
    /// finishes when run again.
    #[arg(
        long,
        value_name = "NAME",
        required_unless_present = "decrypt",
        conflicts_with = "decrypt",
        value_parser = parse_env_name
    )]
    pub new_key_env: Option<String>,

    /// Decrypt every value with the old key: the database becomes plain, as an app without
    /// EncryptedSerializer writes it.
    #[arg(long, requires = "old_key_env")]
    pub decrypt: bool,

    /// Decrypt every value and report what would change; write nothing.
    #[arg(long, short = 'n')]
    pub dry_run: bool,

    /// On a terminal, do not ask before writing (the question is only asked when stdin and
    /// stdout are a terminal; never in a dry run, a pipe or cron).
    #[arg(long, short = 'y')]
    pub yes: bool,

    /// Values rewritten per transaction: the longest a live app waits for memctl is one
    /// such transaction (at most 4 MiB of values).
    #[arg(long, value_name = "N", default_value_t = 256,
          value_parser = clap::value_parser!(u64).range(1..=100_000))]
    pub batch: u64,

    /// Afterwards VACUUM and truncate the WAL, so that no page of the file or its WAL keeps
    /// an old value (it holds the write lock while it rebuilds the file: exit code 3, nothing
    /// lost, if an app keeps the database busy or has a file over 64 MiB open).
    #[arg(long)]
    pub vacuum: bool,
}

/// The name of an environment variable (`--key-env`, `--old-key-env`, `--new-key-env`): not
/// empty, without `=` or NUL (no variable can have such a name).
fn parse_env_name(text: &str) -> Result<String, String> {
    if text.is_empty() || text.contains(['=', '\0']) {
        return Err(format!(
            "'{}' is not the name of an environment variable",
            text.escape_debug()
        ));
    }
    Ok(text.to_owned())
}

/// `--to-thread ID`: the id a copy gets, not empty (`--to-thread "$NEW"` with the variable
/// unset would write a thread no app names).
fn parse_new_thread_id(text: &str) -> Result<String, String> {
    match text.is_empty() {
        true => Err("a thread id cannot be empty".to_owned()),
        false => Ok(text.to_owned()),
    }
}

/// `--schema NAME`: a PostgreSQL identifier (any text but NUL, at most 63 bytes: the server
/// would cut a longer one short and could find another schema).
fn parse_schema(text: &str) -> Result<String, String> {
    if text.is_empty() || text.contains('\0') {
        return Err(format!("'{}' is not a schema name", text.escape_debug()));
    }
    if text.len() > 63 {
        return Err(format!(
            "'{}' is longer than PostgreSQL's 63-byte names",
            text.escape_debug()
        ));
    }
    Ok(text.to_owned())
}

/// `trim --keep N`: N ≥ 1 (a trim that keeps nothing is `rm --all-messages`).
fn parse_keep(text: &str) -> Result<u64, String> {
    match text.parse::<u64>() {
        Ok(0) => {
            Err("0 keeps no message: to clear a thread, use `memctl rm --all-messages`".into())
        }
        Ok(n) => Ok(n),
        Err(e) => Err(format!("'{text}' is not a number of messages ({e})")),
    }
}

// ---- `memctl store` (the LangGraph Store, issue #28) ----------------------------------------

/// Subcommands of `store`. NAMESPACE is the labels joined with `.` (`users.u-42.memories`).
#[derive(Debug, Subcommand)]
pub enum StoreCommand {
    /// Every namespace: items, bytes of their values, expired items (what a sweep would
    /// delete), newest update.
    Namespaces(StoreNamespacesArgs),
    /// The items of one namespace (exactly that one, not those below it): key, size, created,
    /// updated, expires.
    Ls(StoreLsArgs),
    /// One item's value as JSON (what `store.get(namespace, key).value` returns); an expired
    /// item is shown with a note on stderr.
    Get(StoreGetArgs),
    /// Delete a whole namespace's items, or some keys, and their vectors, as `store.delete`
    /// does, in one transaction.
    Rm(StoreRmArgs),
    /// Delete every expired item exactly as the store's own `sweep_ttl` decides (for cron:
    /// exit 0 when nothing is due).
    Sweep(StoreSweepArgs),
}

/// Arguments of `store namespaces`.
#[derive(Debug, Args)]
pub struct StoreNamespacesArgs {
    /// Only this namespace and those below it (labels joined with '.': users.u-42).
    #[arg(long, value_name = "NAMESPACE")]
    pub prefix: Option<String>,

    /// Cut namespaces to their first N labels and add up what falls together (as
    /// list_namespaces(max_depth=N) groups them).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_depth: Option<u32>,
}

/// Arguments of `store ls`.
#[derive(Debug, Args)]
pub struct StoreLsArgs {
    /// The namespace: its labels joined with '.' (users.u-42.memories); a label never
    /// contains '.' (LangGraph refuses one), so the text is never ambiguous.
    #[arg(value_name = "NAMESPACE")]
    pub namespace: String,

    /// Show at most this many items (in key order).
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
}

/// Arguments of `store get`.
#[derive(Debug, Args)]
pub struct StoreGetArgs {
    /// The namespace: its labels joined with '.' (users.u-42.memories); a label never
    /// contains '.' (LangGraph refuses one), so the text is never ambiguous.
    #[arg(value_name = "NAMESPACE")]
    pub namespace: String,

    /// The item's key.
    #[arg(value_name = "KEY")]
    pub key: String,
}

/// Arguments of `store rm`.
#[derive(Debug, Args)]
pub struct StoreRmArgs {
    /// The namespace: its labels joined with '.' (users.u-42.memories; a label never
    /// contains '.'). Only this namespace, not those below it.
    #[arg(value_name = "NAMESPACE")]
    pub namespace: String,

    /// Keys to delete; none deletes every item of the namespace.
    #[arg(value_name = "KEY")]
    pub keys: Vec<String>,

    /// Show what would be deleted and delete nothing.
    #[arg(long, short = 'n')]
    pub dry_run: bool,

    /// On a terminal, do not ask before deleting (the question is only asked when stdin and
    /// stdout are a terminal; never in a dry run, a pipe or cron).
    #[arg(long, short = 'y')]
    pub yes: bool,
}

/// Arguments of `store sweep`.
#[derive(Debug, Args)]
pub struct StoreSweepArgs {
    /// Show what would be deleted and delete nothing.
    #[arg(long, short = 'n')]
    pub dry_run: bool,
}

/// A duration flag (`--idle`, `--min-idle`): `30d`, `12h`, `90m`, `1d12h`… Checked while
/// parsing, so a bad one is a usage error (exit code 2) like any other bad flag value.
fn parse_duration(text: &str) -> Result<String, String> {
    crate::ops::duration::parse_seconds(text)
        .map(|_| text.to_owned())
        .map_err(|e| e.to_string())
}

/// `--settle DURATION`: a duration of at most an hour.
fn parse_settle(text: &str) -> Result<String, String> {
    match crate::ops::duration::parse_seconds(text) {
        Ok(secs) if secs > 3600 => Err(format!("{text} is longer than an hour")),
        Ok(_) => Ok(text.to_owned()),
        Err(e) => Err(e.to_string()),
    }
}

/// `--meta KEY=VALUE` (find, forget, threads list): the key must not be empty.
fn parse_meta(text: &str) -> Result<String, String> {
    crate::ops::find::MetaCondition::parse(text)
        .map(|_| text.to_owned())
        .map_err(|e| e.to_string())
}

/// `--jobs N` (threads list, tokens --all, find): 1 to
/// [`crate::read::readers::MAX_JOBS`] connections.
fn parse_jobs(text: &str) -> Result<usize, String> {
    let max = crate::read::readers::MAX_JOBS;
    match text.parse::<usize>() {
        Ok(n) if (1..=max).contains(&n) => Ok(n),
        _ => Err(format!("expected a number of connections from 1 to {max}")),
    }
}

/// `rm --match REGEX`: a valid regular expression (Rust regex syntax).
fn parse_regex(text: &str) -> Result<String, String> {
    regex::Regex::new(text)
        .map(|_| text.to_owned())
        .map_err(|e| {
            let text = e.to_string();
            let folded: Vec<&str> = text.lines().map(str::trim).collect();
            format!("not a valid regular expression: {}", folded.join(" "))
        })
}

/// Arguments of `browse`.
#[derive(Debug, Args)]
pub struct BrowseArgs {
    /// Open on this thread's history instead of the threads list.
    #[arg(long, short = 't', value_name = "ID")]
    pub thread: Option<String>,

    /// The thread to open on, without --thread.
    #[arg(value_name = "THREAD", conflicts_with = "thread")]
    pub thread_id: Option<String>,
}

// ---- threads that travel (#29) ----

/// How the values of moved threads change on the way (copy, import, migrate).
#[derive(Debug, Clone, Args)]
pub struct MoveChanges {
    /// Write each copied checkpoint's DeltaChannel values in full (the value LangGraph
    /// rebuilds from the snapshots and writes), as a graph whose channels are plain reducer
    /// channels stores them: the copy is a plain thread that tools and savers without
    /// DeltaChannel read. Bigger than the source.
    #[arg(long)]
    pub materialize: bool,

    /// The environment variable holding the AES key to encrypt the copy with (its UTF-8
    /// bytes, as LangGraph reads LANGGRAPH_AES_KEY): plain values are encrypted, encrypted
    /// ones opened with --key-env's key (default LANGGRAPH_AES_KEY) and encrypted again.
    /// Without it, --key-env given alone writes the copy decrypted.
    #[arg(long, value_name = "NAME", value_parser = parse_env_name)]
    pub new_key_env: Option<String>,
}

/// Arguments of `copy`.
#[derive(Debug, Args)]
pub struct CopyArgs {
    /// The thread to copy.
    #[arg(long, value_name = "ID", required_unless_present_any = ["all", "thread_id"])]
    pub thread: Option<String>,

    /// The thread to copy, without --thread.
    #[arg(value_name = "THREAD", conflicts_with_all = ["thread", "all"])]
    pub thread_id: Option<String>,

    /// Copy every thread (the ones --idle and --meta select) into --to, one transaction per
    /// thread, each under its own id.
    #[arg(long, conflicts_with_all = ["thread", "to_thread", "at"], requires = "to")]
    pub all: bool,

    /// With --all: only threads whose latest checkpoint is older than this (e.g. 30d, 12h),
    /// as `prune --idle` selects them.
    #[arg(long, value_name = "DUR", requires = "all", value_parser = parse_duration)]
    pub idle: Option<String>,

    /// With --all: only threads whose metadata (the configurable keys the app passed, in any
    /// of their checkpoints) or latest state channel KEY equals VALUE; repeat to require
    /// several (the selection of `find --meta`).
    #[arg(long, value_name = "KEY=VALUE", requires = "all", value_parser = parse_meta)]
    pub meta: Vec<String>,

    /// The id of the copy (default: the same id, which needs --to another database).
    #[arg(long, value_name = "ID", value_parser = parse_new_thread_id)]
    pub to_thread: Option<String>,

    /// The database to copy into: a SQLite file (created when it does not exist) or a
    /// PostgreSQL connection string (PostgresSaver's tables are made there as its setup()
    /// makes them when it has none). Default: the source database (--db).
    #[arg(long, value_name = "DB")]
    pub to: Option<PathBuf>,

    /// Fork: the copy ends at this root checkpoint (its ancestors and their subgraph
    /// checkpoints and pending writes go with it), so the app continues the copy from there.
    #[arg(long, value_name = "CHECKPOINT")]
    pub at: Option<String>,

    /// Overwrite the target thread when it exists (in the same transaction as the copy).
    #[arg(long)]
    pub replace: bool,

    /// Read everything and say what would be copied; write nothing.
    #[arg(long, short = 'n')]
    pub dry_run: bool,
    /// How the moved values change on the way.
    #[command(flatten)]
    pub changes: MoveChanges,
}

/// `memctl export`.
#[derive(Debug, Clone, Args)]
pub struct ExportArgs {
    /// A thread to export (repeatable).
    #[arg(long, value_name = "ID", required_unless_present_any = ["all", "thread_ids"])]
    pub thread: Vec<String>,

    /// Threads to export, without --thread.
    #[arg(value_name = "THREAD")]
    pub thread_ids: Vec<String>,

    /// Export every thread of the database.
    #[arg(long, conflicts_with_all = ["thread", "thread_ids"])]
    pub all: bool,

    /// The archive to write: a new SQLite file (an existing one is refused unless --force).
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: PathBuf,

    /// Replace the file when it exists (only once the new archive is complete and verified).
    #[arg(long)]
    pub force: bool,

    /// Replace every match of this regular expression with `[erased]` (repeatable: each
    /// pattern is searched on its own, and where matches overlap or touch the whole stretch
    /// becomes one `[erased]`; the patterns and what they matched are never printed).
    #[arg(long, value_name = "REGEX")]
    pub redact: Vec<String>,
}

/// `memctl import`.
#[derive(Debug, Clone, Args)]
pub struct ImportArgs {
    /// The file to import from (an export, or any SqliteSaver file or PostgreSQL URL).
    #[arg(value_name = "FILE")]
    pub file: PathBuf,

    /// A thread to import (repeatable; default: every thread of the file).
    #[arg(long, value_name = "ID")]
    pub thread: Vec<String>,

    /// The id the thread gets in --db (one --thread only; default: its own id).
    #[arg(long, value_name = "ID", value_parser = parse_new_thread_id)]
    pub to_thread: Option<String>,

    /// Overwrite threads of the same id in --db (each in the transaction that writes it).
    #[arg(long)]
    pub replace: bool,

    /// Read everything and say what would be imported; write nothing.
    #[arg(long, short = 'n')]
    pub dry_run: bool,
    /// How the moved values change on the way.
    #[command(flatten)]
    pub changes: MoveChanges,
}

/// `memctl migrate`.
#[derive(Debug, Clone, Args)]
pub struct MigrateArgs {
    /// The database to migrate into: a SQLite file (created when it does not exist) or a
    /// PostgreSQL connection string (PostgresSaver's tables are made there as its setup()
    /// makes them when it has none).
    #[arg(long, value_name = "DB")]
    pub to: PathBuf,

    /// Overwrite target threads that differ from the source (each in the transaction that
    /// writes it).
    #[arg(long)]
    pub replace: bool,

    /// Read everything and say what would move; write nothing.
    #[arg(long, short = 'n')]
    pub dry_run: bool,

    /// Migrate the LangGraph Store's items without their embedding vectors (store_vectors),
    /// where the target cannot hold them (vectors move only between SQLite files): the app's
    /// vector search finds an item again once the app writes it again.
    #[arg(long)]
    pub without_vectors: bool,

    /// How the moved values change on the way.
    #[command(flatten)]
    pub changes: MoveChanges,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `--format` parses into the output layer's plain `Format`, every value of it.
    #[test]
    fn format_values_map_onto_the_output_format() {
        for (text, format) in [
            ("table", Format::Table),
            ("json", Format::Json),
            ("jsonl", Format::Jsonl),
        ] {
            let cli = Cli::try_parse_from(["memctl", "--format", text, "stats"]).expect("parses");
            assert_eq!(cli.global.format, Some(format), "{text}");
        }
        assert!(Cli::try_parse_from(["memctl", "--format", "xml", "stats"]).is_err());
    }
}
