//! The `summarize` job: older messages become one summary through a model endpoint; the
//! newest stay verbatim. Requests run `--concurrency` at a time; writes happen on the main
//! thread, each in its own transaction, and only if the thread did not move meanwhile.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{bail, Context, Result};

use crate::codec::Value;
use crate::endpoint::chat::{check_endpoint, CallError, ChatClient, Completion};
use crate::endpoint::prompt_file::read_prompt_file;
use crate::exit::Usage;
use crate::model::{Kind, Message};
use crate::ops::edit::{build_update, check_tool_pairs, Editable, Planned, Refusal};
use crate::ops::outcome::{Outcome, Status};
use crate::ops::summarize::{
    approx_tokens, combine, render_prompt, summary_message, transcript_parts_each, DEFAULT_PROMPT,
};
use crate::ops::window::{trim_window, Limit};
use crate::tokens::{approx, Counter};

use super::batch::{self, Batches, Done, Options, Rewrite, Target, Threads};
use super::{Ctx, Sink};

/// What `summarize` is asked to do.
#[derive(Debug, Clone)]
pub struct Request {
    /// The threads.
    pub threads: Threads,
    /// Only threads with at least this many tokens (`--min-tokens`, by `counter`).
    pub min_tokens: Option<u64>,
    /// Keep the newest this many messages verbatim (`--keep`).
    pub keep: Option<u64>,
    /// Keep the newest messages within this many tokens verbatim (`--keep-tokens`).
    pub keep_tokens: Option<u64>,
    /// The counter the window and `min_tokens` are counted with.
    pub counter: Counter,
    /// The model endpoint (an OpenAI-compatible base URL); needed unless a dry run.
    pub endpoint: Option<String>,
    /// The model; needed unless a dry run.
    pub model: Option<String>,
    /// The variable holding the endpoint's API key.
    pub api_key_env: String,
    /// Requests at once.
    pub concurrency: usize,
    /// Seconds a request may take.
    pub timeout: u64,
    /// Retries of a failed request.
    pub retries: u32,
    /// Tokens of transcript per request at most (longer ones are summarized in parts).
    pub max_input_tokens: u64,
    /// The prompt template (`--prompt-file`; the default prompt without one).
    pub prompt_file: Option<PathBuf>,
    /// The summary goes to this state key instead of a message (`--summary-key`).
    pub summary_key: Option<String>,
    /// The summary key may be one the thread has not written yet (`--new-key`).
    pub new_key: bool,
    /// How the rewrite runs.
    pub rewrite: Rewrite,
}

/// One thread to summarize, as planned before any call.
struct Plan {
    keep: Vec<usize>,
    /// The transcript of what the summary replaces, in parts that each fit the input budget.
    parts: Vec<String>,
    notes: Vec<String>,
    outcome: Outcome,
}

/// Runs `summarize`, handing `batches` the outcomes as the threads are done. The report's
/// totals (and JSON `totals`) are the one place the run's counts are given, the endpoint's
/// tokens included.
pub fn run(args: &Request, ctx: &Ctx, sink: &dyn Sink, batches: &mut dyn Batches) -> Result<Done> {
    let counter = args.counter;
    let template = match &args.prompt_file {
        Some(path) => read_prompt_file(path)?,
        None => DEFAULT_PROMPT.to_owned(),
    };
    render_prompt(&template, "").context("--prompt-file")?;
    let limit = match (args.keep, args.keep_tokens) {
        (Some(n), _) => Limit::Messages(n),
        (None, Some(t)) => Limit::Tokens {
            max: t,
            overhead: counter.list_overhead(),
        },
        (None, None) => bail!("give --keep N or --keep-tokens N"),
    };
    // A malformed endpoint is a usage error (exit 2), before any database work.
    if let Some(endpoint) = &args.endpoint {
        check_endpoint(endpoint).map_err(|e| Usage(e.0))?;
    }
    let client = if args.rewrite.dry_run {
        None
    } else {
        let endpoint = args.endpoint.as_deref().context("--endpoint is required")?;
        let model = args.model.as_deref().context("--model is required")?;
        let key = std::env::var(&args.api_key_env)
            .ok()
            .filter(|k| !k.is_empty());
        Some(
            ChatClient::new(
                endpoint,
                model,
                key,
                Duration::from_secs(args.timeout.max(1)),
                args.retries,
            )
            .map_err(|e| Usage(e.0))?,
        )
    };

    let target = Target {
        min_tokens: args.min_tokens.map(|m| (m, counter)),
        ..Target::of(ctx, &args.threads)?
    };
    let mut opts = Options::of(ctx, &args.rewrite, "summarize")?;
    if client.is_some() {
        // Endpoint calls wait on the network: --concurrency of them at once.
        opts.workers = args.concurrency.clamp(1, 64);
    }
    let store = ctx.open_for_writing(opts.dry_run)?;
    // A plain thread the app's key would have to encrypt is refused before its request.
    let app_seal = batch::AppSeal::of(&*store, &opts.keys)?;
    let edit = |ed: &Editable| {
        app_seal.check(ed)?;
        let p = match plan(ed, args, &template, limit, counter)? {
            Ok(p) => p,
            Err(outcome) => return Ok(Planned::nothing_to_write(outcome)),
        };
        let Some(client) = &client else {
            return Ok(Planned::nothing_to_write(p.outcome));
        };
        let thread = ed.thread_id.clone();
        let completion =
            match summarize_parts(client, &template, p.parts.clone(), args.max_input_tokens) {
                Ok(c) => c,
                Err(e) => {
                    return Ok(Planned::nothing_to_write(Outcome::failed(
                        &thread,
                        e.to_string(),
                    )))
                }
            };
        Ok(with_summary(ed, p, &completion, args).unwrap_or_else(|e| {
            Planned::nothing_to_write(Outcome::failed(&thread, format!("{e:#}")))
        }))
    };
    batch::run_reported(&*store, &target, &opts, &edit, ctx.quiet, sink, batches)
}

/// Decides what a thread's summary replaces, or why it needs none. The window is chosen on
/// the outlines; each message's view is then built once, on its own (a chunk per core), for
/// its tokens and, when it is summarized, its transcript line, packed as it comes: a long
/// thread is never held as views.
fn plan(
    ed: &Editable,
    args: &Request,
    template: &str,
    limit: Limit,
    counter: Counter,
) -> Result<std::result::Result<Plan, Outcome>> {
    let n = ed.outline.len();
    let costs = super::trim::window_costs(ed, limit, counter)?;
    let window = trim_window(&ed.outline, &costs, limit, false);
    // What `ops::summarize::older` gives, in one pass: every message not kept, but a
    // leading SystemMessage.
    let mut kept = vec![false; n];
    for &i in &window.keep {
        kept[i] = true;
    }
    let system_first = ed.outline.first().is_some_and(|m| m.kind == Kind::System);
    let old: Vec<usize> = (0..n)
        .filter(|&i| !(kept[i] || i == 0 && system_first))
        .collect();
    let mut is_old = vec![false; n];
    for &i in &old {
        is_old[i] = true;
    }
    let previous = match &args.summary_key {
        Some(key) => ed
            .latest
            .checkpoint
            .channel(key)
            .and_then(Value::as_str)
            .map(str::to_owned),
        None => None,
    };
    let (mut before_tokens, mut kept_tokens) = (0u64, 0u64);
    let mut first_old_is_summary = false;
    let mut failed = None;
    let read = crate::par::par_in_order(n, |i| -> Result<(u64, Option<String>, bool)> {
        let m = ed.message(i)?;
        let summary = is_old[i] && crate::ops::summarize::is_summary(&m);
        let line = is_old[i].then(|| crate::ops::summarize::line(&m));
        Ok((approx::count_message(&m), line, summary))
    });
    let lines = read.enumerate().filter_map(|(i, r)| match r {
        Ok((tokens, line, summary)) => {
            before_tokens += tokens;
            if kept[i] {
                kept_tokens += tokens;
            }
            if summary && old.first() == Some(&i) {
                first_old_is_summary = true;
            }
            line
        }
        Err(e) => {
            failed.get_or_insert(e);
            None
        }
    });
    // Each part is measured as it is made; a dry run keeps none (only their prompts' size
    // is reported), a real run keeps them for the endpoint.
    let (mut parts, mut parts_n, mut prompt_tokens) = (Vec::new(), 0usize, Ok(0u64));
    transcript_parts_each(
        lines,
        previous.as_deref(),
        args.max_input_tokens,
        &mut |part| {
            parts_n += 1;
            if let Ok(total) = &mut prompt_tokens {
                match render_prompt(template, &part) {
                    Ok(t) => *total += approx_tokens(&t),
                    Err(e) => prompt_tokens = Err(e),
                }
            }
            if !args.rewrite.dry_run {
                parts.push(part);
            }
        },
    );
    if let Some(e) = failed {
        return Err(e);
    }
    let mut outcome = Outcome::skipped(&ed.thread_id, String::new());
    outcome.notes = window.notes.clone();
    outcome.counted = true;
    outcome.messages = (n, n);
    outcome.tokens = (before_tokens, before_tokens);
    let only_a_summary = old.len() == 1 && first_old_is_summary;
    if old.is_empty() || only_a_summary {
        outcome.status = Status::Unchanged;
        return Ok(Err(outcome));
    }
    if let Some(key) = args.summary_key.as_deref().filter(|_| !args.new_key) {
        let channels = ed.latest.checkpoint.channel_versions();
        if !channels.iter().any(|(k, _)| k == key) {
            let names: Vec<&str> = channels
                .iter()
                .map(|(k, _)| k.as_str())
                .filter(|k| !k.starts_with("__") && !k.starts_with("branch:"))
                .collect();
            return Err(Refusal(format!(
                "thread '{}' has no channel '{key}' (its channels: {}); the app would never see the summary and the older messages would be gone. Pass --new-key if the graph declares '{key}' but has not written it yet",
                ed.thread_id,
                names.join(", ")
            ))
            .into());
        }
    }
    let mut notes = window.notes;
    if parts_n > 1 {
        notes.push(format!(
            "over --max-input-tokens: summarized in {parts_n} parts, then the part summaries (nothing left out)"
        ));
    }
    let prompt_tokens = prompt_tokens?;
    let extra = usize::from(args.summary_key.is_none());
    outcome.status = Status::WouldSummarize;
    outcome.notes = notes.clone();
    outcome.notes.push(format!(
        "{} to summarize, prompt ≈{prompt_tokens} tokens",
        crate::text::human::count(old.len() as u64, "message"),
    ));
    outcome.messages = (n, window.keep.len() + extra);
    outcome.tokens = (before_tokens, kept_tokens);
    outcome.removed = old.iter().map(|&i| ed.removed(i)).collect();
    Ok(Ok(Plan {
        keep: window.keep,
        parts,
        notes,
        outcome,
    }))
}

/// Rounds of part summaries before memctl gives up (each round shrinks the input by the
/// model's compression; a model that does not compress never converges).
const MAX_ROUNDS: usize = 6;

/// Summarizes a transcript given in parts: one call when it is one part; otherwise each part
/// is summarized, then the part summaries (in parts again) until one summary is left
/// (map-reduce). Token counts add up over every call; attempts are the most any call took.
fn summarize_parts(
    client: &ChatClient,
    template: &str,
    mut parts: Vec<String>,
    max_input: u64,
) -> Result<Completion, CallError> {
    let mut total = Completion {
        text: String::new(),
        prompt_tokens: None,
        completion_tokens: None,
        attempts: 0,
    };
    let add = |a: Option<u64>, b: Option<u64>| match (a, b) {
        (None, None) => None,
        (a, b) => Some(a.unwrap_or(0) + b.unwrap_or(0)),
    };
    for _round in 0..MAX_ROUNDS {
        let mut summaries = Vec::with_capacity(parts.len());
        for part in &parts {
            let prompt = render_prompt(template, part).map_err(|e| CallError(format!("{e:#}")))?;
            let c = client.complete(&prompt)?;
            total.prompt_tokens = add(total.prompt_tokens, c.prompt_tokens);
            total.completion_tokens = add(total.completion_tokens, c.completion_tokens);
            total.attempts = total.attempts.max(c.attempts);
            summaries.push(c.text);
        }
        if let [one] = summaries.as_slice() {
            total.text = one.clone();
            return Ok(total);
        }
        parts = combine(&summaries, max_input);
    }
    Err(CallError(format!(
        "the part summaries still did not fit --max-input-tokens {max_input} after {MAX_ROUNDS} rounds; raise it"
    )))
}

/// The edit that puts the summary `c` in place of what plan `p` replaces, ready to write.
fn with_summary(ed: &Editable, p: Plan, c: &Completion, args: &Request) -> Result<Planned> {
    let msgs = ed.messages()?;
    let system = msgs.first().is_some_and(|m| m.kind == Kind::System) && p.keep.first() == Some(&0);
    let tail: Vec<usize> = p
        .keep
        .iter()
        .copied()
        .filter(|&i| !(system && i == 0))
        .collect();
    let mut items: Vec<Value> = Vec::with_capacity(p.keep.len() + 1);
    if system {
        items.push(ed.stored(0)?);
    }
    let mut other = Vec::new();
    let mut kept_msgs: Vec<Message> = Vec::new();
    match &args.summary_key {
        Some(key) => other.push((key.clone(), Value::str(c.text.clone()))),
        None => {
            let id = uuid::Uuid::new_v4().to_string();
            let summary = summary_message(&c.text, &id);
            kept_msgs.extend(Message::from_value(&summary));
            items.push(summary);
        }
    }
    for &i in &tail {
        items.push(ed.stored(i)?);
    }
    let kept_refs: Vec<&Message> = p.keep.iter().map(|&i| &msgs[i]).collect();
    check_tool_pairs(&kept_refs)?;
    let upd = build_update(ed, items, other)?;
    let after_tokens = approx::count(&kept_msgs)
        + kept_refs
            .iter()
            .map(|m| approx::count_message(m))
            .sum::<u64>();
    let mut outcome = p.outcome;
    outcome.status = Status::Planned;
    outcome.notes = p.notes;
    if c.attempts > 1 {
        outcome
            .notes
            .push(format!("answered after {} attempts", c.attempts));
    }
    outcome.tokens.1 = after_tokens;
    outcome.checkpoint_id = Some(upd.checkpoint_id.clone());
    outcome.endpoint_tokens = Some((
        c.prompt_tokens.unwrap_or(0),
        c.completion_tokens.unwrap_or(0),
    ));
    Ok(Planned {
        on_write: Status::Summarized,
        update: Some(upd),
        ..Planned::nothing_to_write(outcome).expecting(ed.pending_writes)
    })
}
