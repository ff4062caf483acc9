//! What the browser reads. A view of one thread reads through the read layer
//! ([`crate::read`]: its history, a checkpoint's state and messages) and renders with
//! `output`'s renderer (`show`, `diff`) or lays out the command's table for the screen's width
//! (`tokens`: [`TokensTable`]); the lists run the jobs the commands run (`threads list
//! --meta`, `find` — the threads' hits and the Store's —, `store …`: [`crate::jobs`]) and
//! keep their typed rows. The database is opened read-only ([`crate::jobs::Ctx`]); nothing
//! here writes.

use anyhow::Result;

use crate::output::sanitize::for_terminal;
use crate::output::Format;

/// One thread of the threads view (what `threads list` lists of it).
#[derive(Debug, Clone)]
pub struct ThreadRec {
    /// The thread id (raw: sanitize before showing).
    pub thread_id: String,
    /// Checkpoints, all namespaces.
    pub checkpoints: u64,
    /// Messages of the latest state.
    pub messages: Option<u64>,
    /// Approximate tokens of the latest state.
    pub tokens: Option<u64>,
    /// Step of the latest checkpoint.
    pub last_step: Option<i64>,
    /// Time of the latest checkpoint (UTC).
    pub updated_at: Option<String>,
    /// Seconds since then.
    pub age_seconds: Option<i64>,
    /// Stored bytes.
    pub bytes: u64,
    /// The app's last activity (what the list is sorted by, newest first), once known.
    pub updated: Option<jiff::Timestamp>,
    /// The latest root checkpoint's id (whose blob gives the messages and tokens).
    pub latest_root_id: Option<String>,
    /// The largest checkpoint id in any namespace (the time of the app's last activity).
    pub latest_id: String,
    /// `messages`, `tokens` and the time are read (until then the summary alone is known:
    /// the cells are pending).
    pub known: bool,
}

/// One checkpoint of a history as the browser shows it: what its row gives at once (id,
/// step, source, bytes), then what its blob gives (time, messages, tokens), filled in
/// between keys ([`Source::history_facts`]); a cell not yet known is drawn as pending.
#[derive(Debug, Clone)]
pub struct HistoryRec {
    /// Its id.
    pub checkpoint_id: String,
    /// Its parent's id.
    pub parent_checkpoint_id: Option<String>,
    /// `metadata.step`.
    pub step: Option<i64>,
    /// `metadata.source`.
    pub source: Option<String>,
    /// The checkpoint's `ts` (once `known`).
    pub ts: Option<String>,
    /// Messages of the state as `history` counts them (once `known`).
    pub messages: Option<u64>,
    /// Pending writes.
    pub pending_writes: Option<u64>,
    /// Subgraph namespaces that ran during this step.
    pub namespaces: Vec<String>,
    /// Stored bytes of the row (checkpoint + metadata), from the storage layer.
    pub bytes: Option<u64>,
    /// Approximate tokens of the messages stored in the checkpoint (once `tokens_known`).
    pub tokens: Option<u64>,
    /// `ts` and `messages` are read (until then they are pending).
    pub known: bool,
    /// `tokens` is counted (until then it is pending).
    pub tokens_known: bool,
}

impl From<crate::read::history::RowRecord> for HistoryRec {
    fn from(r: crate::read::history::RowRecord) -> HistoryRec {
        HistoryRec {
            checkpoint_id: r.checkpoint_id,
            parent_checkpoint_id: r.parent_checkpoint_id,
            step: r.step,
            source: r.source,
            ts: None,
            messages: None,
            pending_writes: Some(r.pending_writes as u64),
            namespaces: r.namespaces,
            bytes: Some(r.bytes),
            tokens: None,
            known: false,
            tokens_known: false,
        }
    }
}

/// One `find` hit: in a thread's latest state (`thread_id`, `checkpoint_id`,
/// `index`) or in the Store (`namespace`, `key`; `role` `store`).
#[derive(Debug, Clone)]
pub struct Hit {
    /// Thread of the hit (none for the Store's).
    pub thread_id: Option<String>,
    /// Checkpoint of the hit (none for the Store's).
    pub checkpoint_id: Option<String>,
    /// Message position.
    pub index: Option<usize>,
    /// `human`, `ai`, `channel:NAME`, `thread`, `store`…
    pub role: String,
    /// Text before the match.
    pub before: String,
    /// The match.
    pub matched: String,
    /// Text after the match.
    pub after: String,
    /// The Store item's namespace (its labels; a Store hit's only).
    pub namespace: Option<Vec<String>>,
    /// The Store item's key (a Store hit's only).
    pub key: Option<String>,
}

impl Hit {
    /// Whether the hit is in the Store (not in a thread).
    pub fn in_store(&self) -> bool {
        self.thread_id.is_none() && self.namespace.is_some()
    }
}

/// One Store namespace (a row of `store namespaces`).
#[derive(Debug, Clone)]
pub struct NamespaceRec {
    /// Its labels.
    pub namespace: Vec<String>,
    /// Items.
    pub items: u64,
    /// Bytes of the values.
    pub bytes: u64,
    /// Expired items.
    pub expired: u64,
}

/// One Store item (a row of `store ls`).
#[derive(Debug, Clone)]
pub struct ItemRec {
    /// Its key.
    pub key: String,
    /// Bytes of its value.
    pub size: u64,
    /// Last written.
    pub updated_at: Option<String>,
    /// Expiry, if any.
    pub expires_at: Option<String>,
    /// It has expired (a sweep would delete it).
    pub expired: bool,
}

/// Text a command printed, split in lines for the screen (terminal-safe).
pub struct Text {
    /// The lines, terminal-safe.
    pub lines: Vec<String>,
}

/// Where the browser reads from: the job context `browse` was given (the database, its
/// schema, key variable, namespace), handed to each job it runs.
pub struct Source {
    ctx: crate::jobs::Ctx,
    /// The notes of the jobs run (shown on the status line: [`Source::notes`]).
    sink: Notes,
    /// The database opened read-only once for the views' own reads (history, checkpoints,
    /// tokens), kept between keys: a Postgres connection is not made again for each read.
    /// Dropped after an error, so that the next read opens it afresh.
    store: std::cell::RefCell<Option<Box<dyn crate::storage::CheckpointStore>>>,
}

/// The notes the browser's jobs (and, once installed with [`crate::notes::install`], the
/// layers below them) have for the person browsing: kept until the status line shows them,
/// never written to stderr (which is the screen).
#[derive(Debug, Clone, Default)]
pub struct Notes(std::sync::Arc<std::sync::Mutex<Vec<String>>>);

impl Notes {
    /// Keeps `text` (one line, unescaped) for the status line.
    pub fn push(&self, text: &str) {
        if let Ok(mut n) = self.0.lock() {
            n.push(text.to_owned());
        }
    }

    /// The notes kept since the last call, in order.
    pub fn take(&self) -> Vec<String> {
        self.0
            .lock()
            .map(|mut n| std::mem::take(&mut *n))
            .unwrap_or_default()
    }
}

impl crate::jobs::Sink for Notes {
    fn note(&self, text: &str) {
        self.push(text);
    }

    /// The browser runs only read jobs: nothing to ask.
    fn confirm(&self, _question: &crate::jobs::Question) -> Result<()> {
        Ok(())
    }
}

/// Items a Store namespace shows at most.
pub const ITEM_LIMIT: usize = 500;

impl Source {
    /// The source `ctx` names (nothing is opened yet).
    pub fn new(ctx: impl Into<crate::jobs::Ctx>) -> Source {
        Source {
            ctx: ctx.into(),
            sink: Notes::default(),
            store: std::cell::RefCell::new(None),
        }
    }

    /// Where the notes of the jobs the browser runs go (a handle on the same list: `browse`
    /// installs it as the notes writer too, for the layers below the jobs).
    pub fn notes(&self) -> Notes {
        self.sink.clone()
    }

    /// Runs `f` on the database opened read-only (opened at the first call and kept; dropped
    /// after an error).
    fn with_store<T>(
        &self,
        f: impl FnOnce(&dyn crate::storage::CheckpointStore) -> Result<T>,
    ) -> Result<T> {
        let mut cell = self.store.borrow_mut();
        let store = match cell.take() {
            Some(s) => s,
            None => self.ctx.open_read_only()?,
        };
        let result = f(&*store);
        if result.is_ok() {
            *cell = Some(store);
        }
        result
    }

    /// The database as memctl shows it (a URL's password hidden).
    pub fn shown_db(&self) -> String {
        self.ctx
            .db
            .as_deref()
            .map_or_else(|| "-".into(), crate::storage::shown_path)
    }

    /// The `--schema` / `--key-env` flags the commands of the actions panel repeat.
    pub fn extra_flags(&self) -> Vec<(String, String)> {
        let mut out = Vec::new();
        if let Some(s) = &self.ctx.schema {
            out.push(("--schema".into(), s.clone()));
        }
        if let Some(k) = &self.ctx.key_env {
            out.push(("--key-env".into(), k.clone()));
        }
        out
    }

    /// Every thread from the size summaries alone (ids, checkpoints, bytes, and the time of
    /// the app's last activity from the checkpoint ids), in thread-id order; no blob read.
    /// Messages, tokens (and the time of a thread whose ids carry none) come after the first
    /// draw ([`Source::thread_states`]), as `threads list` reads them.
    pub fn thread_summaries(&self) -> Result<Vec<ThreadRec>> {
        let now = crate::output::human::now(self.ctx.now.as_deref())?;
        self.with_store(|store| {
            let mut all = Vec::new();
            store.for_each_thread(&mut |t| {
                let updated = crate::ops::activity::last_app_activity(&t.latest_id, None);
                // A thread with no root checkpoint has no state to read.
                let known = t.latest_root_id.is_none();
                all.push(ThreadRec {
                    thread_id: t.thread_id,
                    checkpoints: t.checkpoints,
                    messages: None,
                    tokens: None,
                    last_step: None,
                    updated_at: updated.as_ref().map(crate::output::human::utc),
                    age_seconds: updated.map(|u| now.as_second() - u.as_second()),
                    bytes: t.bytes,
                    updated,
                    latest_root_id: t.latest_root_id,
                    latest_id: t.latest_id,
                    known,
                });
                Ok(())
            })?;
            Ok(all)
        })
    }

    /// Fills in `rows`' messages, tokens and time from their latest root checkpoints, as
    /// `threads list` reads them ([`crate::jobs::threads::latest_states`]): a row that
    /// does not read is known without them (`-`, as `threads list` lists it) and its error
    /// comes back (the first one); the others are filled in.
    pub fn thread_states(&self, rows: &mut [&mut ThreadRec]) -> Result<()> {
        let now = crate::output::human::now(self.ctx.now.as_deref())?;
        let ids: Vec<(String, String)> = rows
            .iter()
            .filter_map(|r| Some((r.thread_id.clone(), r.latest_root_id.clone()?)))
            .collect();
        let states = self
            .with_store(|store| crate::jobs::threads::latest_states(store, &self.ctx.keys(), &ids));
        let mut states = match states {
            Ok(s) => s.into_iter(),
            Err(e) => {
                for r in rows.iter_mut() {
                    r.known = true;
                }
                return Err(e);
            }
        };
        let mut first_error = None;
        for r in rows.iter_mut() {
            r.known = true;
            if r.latest_root_id.is_none() {
                continue;
            }
            match states.next() {
                Some(Ok(s)) => {
                    r.messages = s.messages.map(|n| n as u64);
                    r.tokens = s.tokens;
                    if r.updated.is_none() {
                        r.updated = crate::ops::activity::last_app_activity(&r.latest_id, s.ts);
                        r.updated_at = r.updated.as_ref().map(crate::output::human::utc);
                        r.age_seconds = r.updated.map(|u| now.as_second() - u.as_second());
                    }
                }
                Some(Err(e)) => {
                    first_error.get_or_insert_with(|| {
                        anyhow::anyhow!(
                            "thread '{}' is listed without its state: {e:#}",
                            r.thread_id
                        )
                    });
                }
                None => {}
            }
        }
        first_error.map_or(Ok(()), Err)
    }

    /// The threads whose metadata matches `KEY=VALUE` (`threads list --meta`, the selection
    /// `find --meta` and `forget --meta` make too).
    pub fn threads_with_meta(&self, condition: &str) -> Result<Vec<String>> {
        let req = crate::jobs::threads::Request {
            meta: vec![condition.to_owned()],
            ..Default::default()
        };
        let mut rows: Vec<crate::jobs::threads::ThreadRow> = Vec::new();
        crate::jobs::threads::run(&req, &self.ctx, &self.sink, &mut rows)?;
        // Newest first, as `threads list` lists them.
        rows.sort_by_key(|r| std::cmp::Reverse(r.sort_key(crate::jobs::threads::Sort::Updated)));
        Ok(rows.into_iter().map(|r| r.thread_id).collect())
    }

    /// The checkpoints of `thread` before `before` (an id of its history), newest first,
    /// at most `limit` (a page), from their rows alone: ids, metadata and stored bytes (no
    /// blob read, [`crate::read::history::page_rows`]). Their time, messages and tokens come
    /// after the first draw ([`Source::history_facts`]). True with them when the thread's
    /// message counts need the whole history ([`Source::history_whole`]).
    pub fn history(
        &self,
        thread: &str,
        before: Option<&str>,
        limit: usize,
    ) -> Result<(Vec<HistoryRec>, bool)> {
        self.with_store(|store| {
            let (rows, delta) =
                crate::read::history::page_rows(store, thread, &self.ctx.ns, before, limit)?;
            Ok((rows.into_iter().map(HistoryRec::from).collect(), delta))
        })
    }

    /// The time, messages and tokens of checkpoints `ids` of `thread`, their blobs read one
    /// by one and dropped ([`crate::read::history::blob_facts`]); `None` when the messages
    /// need a DeltaChannel replay (then [`Source::history_whole`] counts them).
    pub fn history_facts(
        &self,
        thread: &str,
        ids: &[&str],
        check_newest: bool,
    ) -> Result<Option<Vec<crate::read::history::BlobFacts>>> {
        self.with_store(|store| {
            crate::read::history::blob_facts(
                store,
                &self.ctx.keys(),
                thread,
                &self.ctx.ns,
                ids,
                check_newest,
            )
        })
    }

    /// Every checkpoint of `thread` as `history` lists it (a DeltaChannel thread's messages
    /// counted over its whole history in one replay).
    pub fn history_whole(&self, thread: &str) -> Result<Vec<crate::read::history::HistoryRecord>> {
        self.with_store(|store| {
            crate::read::history::checkpoints(
                store,
                &self.ctx.keys(),
                thread,
                &self.ctx.ns,
                &crate::read::history::Selection::default(),
            )
        })
    }

    /// The approximate tokens of the messages stored in each of `ids` (checkpoints of
    /// `thread`), read in place from their blobs and dropped.
    pub fn history_tokens(&self, thread: &str, ids: &[&str]) -> Result<Vec<Option<u64>>> {
        let keys: Vec<(&str, &str, &str)> = ids
            .iter()
            .map(|id| (thread, self.ctx.ns.as_str(), *id))
            .collect();
        self.with_store(|store| {
            Ok(store
                .checkpoints_at(&keys)?
                .into_iter()
                .map(|row| {
                    row.ok()
                        .flatten()
                        .and_then(|r| crate::tokens::approx::count_checkpoint_blob(&r.checkpoint))
                        .and_then(|(_, t)| t)
                })
                .collect())
        })
    }

    /// A checkpoint as `show --checkpoint` prints it (the same read and renderer), its
    /// messages rendered one at a time as they are asked for ([`ShowParts`]).
    pub fn show(&self, thread: &str, id: &str) -> Result<ShowParts> {
        self.with_store(|store| {
            let keys = self.ctx.keys();
            let state = crate::read::load_state(store, &keys, thread, &self.ctx.ns, Some(id))?;
            ShowParts::new(state, thread, &self.ctx.ns)
        })
    }

    /// `diff --to ID` (against its parent) as it prints. `shown` is checkpoint `id` when the
    /// browser has read it already (for its chat): then only the parent is read.
    pub fn diff(&self, thread: &str, id: &str, shown: Option<&ShowParts>) -> Result<Text> {
        let shown = shown.filter(|s| s.state.cp.row.checkpoint_id == id);
        // On the database the views keep open (no new connection).
        self.with_store(|store| {
            let mut buf = Vec::new();
            let mut render = |report: &crate::jobs::diff::DiffReport<'_>| {
                crate::output::diff::render(&mut buf, Format::Table, report)
            };
            match shown {
                Some(s) => {
                    let to = crate::jobs::diff::Loaded {
                        cp: &s.state.cp,
                        messages: &s.state.messages,
                        deltas: &s.state.deltas,
                    };
                    crate::jobs::diff::run_against(store, &self.ctx, None, to, &mut render)?
                }
                None => {
                    let req = crate::jobs::diff::Request {
                        thread: thread.to_owned(),
                        from: None,
                        to: Some(id.to_owned()),
                    };
                    crate::jobs::diff::run_on(store, &req, &self.ctx, &mut render)?
                }
            }
            Ok(Text {
                lines: screen_lines(&String::from_utf8_lossy(&buf)),
            })
        })
    }

    /// Per-message tokens of a checkpoint by `counter`, as `tokens --thread` counts them for
    /// the latest one.
    pub fn tokens(
        &self,
        thread: &str,
        id: &str,
        counter: crate::tokens::Counter,
    ) -> Result<TokensTable> {
        self.with_store(|store| {
            let keys = self.ctx.keys();
            let (cp, messages, _) =
                crate::read::load_shallow(store, &keys, thread, &self.ctx.ns, Some(id))?;
            let (list, spans) = crate::read::stored_list(&cp, &messages)?;
            let read = |i: usize| match list {
                Some(list) => list.message(i, &spans[i]),
                None => anyhow::bail!("no message {i}"),
            };
            let report = crate::jobs::tokens::per_message(
                thread,
                spans.len(),
                &read,
                counter,
                Some(&preview),
            )?;
            Ok(TokensTable::new(counter, report.messages))
        })
    }

    /// `find PATTERN -i`: the hits in the latest state of every thread, then the Store's
    /// (when the database has one), in `find`'s order. Threads that could not be searched
    /// are left out (as `find` lists the others).
    pub fn find(&self, pattern: &str) -> Result<Vec<Hit>> {
        let req = crate::jobs::find::Request {
            pattern: Some(pattern.to_owned()),
            ignore_case: true,
            ..Default::default()
        };
        let mut hits = Vec::new();
        let report = crate::jobs::find::run(&req, &self.ctx, &self.sink, &mut |h| {
            hits.push(Hit {
                thread_id: Some(h.thread_id),
                checkpoint_id: Some(h.checkpoint_id),
                index: h.index,
                role: h.role,
                before: h.before,
                matched: h.matched,
                after: h.after,
                namespace: None,
                key: None,
            });
            Ok(())
        })?;
        if let Err(e) = report.check() {
            // Not one thread could be searched: the error, as `find` gives it.
            if !e.is::<crate::exit::Partial>() {
                return Err(e);
            }
        }
        hits.extend(report.store_hits.into_iter().map(|h| Hit {
            thread_id: None,
            checkpoint_id: None,
            index: None,
            role: h.role.to_owned(),
            before: h.before,
            matched: h.matched,
            after: h.after,
            namespace: Some(h.namespace.iter().map(str::to_owned).collect()),
            key: h.key,
        }));
        Ok(hits)
    }

    /// `store namespaces`.
    pub fn store_namespaces(&self) -> Result<Vec<NamespaceRec>> {
        let req = crate::jobs::store::namespaces::Request::default();
        let rows = crate::jobs::store::namespaces::run(&req, &self.ctx, &self.sink)?;
        Ok(rows
            .into_iter()
            .map(|r| NamespaceRec {
                namespace: r.namespace.iter().map(str::to_owned).collect(),
                items: r.items,
                bytes: r.bytes,
                expired: r.expired,
            })
            .collect())
    }

    /// `store ls NAMESPACE --limit`.
    pub fn store_items(&self, namespace: &str) -> Result<Vec<ItemRec>> {
        let req = crate::jobs::store::ls::Request {
            namespace: namespace.to_owned(),
            limit: Some(ITEM_LIMIT),
        };
        let mut items = Vec::new();
        crate::jobs::store::ls::run(&req, &self.ctx, &self.sink, &mut |i| {
            items.push(ItemRec {
                key: i.key,
                size: i.size,
                updated_at: i.updated_at,
                expires_at: i.expires_at,
                expired: i.expired,
            });
            Ok(())
        })?;
        Ok(items)
    }

    /// `store get NAMESPACE KEY` (the JSON value, indented).
    pub fn store_value(&self, namespace: &str, key: &str) -> Result<Text> {
        let req = crate::jobs::store::get::Request {
            namespace: namespace.to_owned(),
            key: key.to_owned(),
        };
        let value = crate::jobs::store::get::run(&req, &self.ctx, &self.sink)?;
        let pretty = serde_json::to_string_pretty(&value)?;
        Ok(Text {
            lines: for_terminal(&pretty).lines().map(str::to_owned).collect(),
        })
    }
}

/// `show`'s text of a checkpoint in parts: the header line, each message (a blank line and
/// its `pretty_print()`), then the other channels and what the thread waits on. The
/// messages stay in their stored list and are rendered when their part is asked for; the
/// same lines as `show` prints, made terminal-safe as `Source::text` makes them.
pub struct ShowParts {
    state: crate::read::State,
    spans: Vec<std::ops::Range<usize>>,
    head: Vec<String>,
    tail: Vec<String>,
    thread: String,
}

/// A message's text as `tokens --thread`'s table shows it beside its count.
fn preview(m: &crate::model::Message) -> String {
    crate::output::human::preview(&m.summary_text(), 50)
}

/// Lines of printed text as the browser shows them (terminal-safe, tabs as spaces).
fn screen_lines(text: &str) -> Vec<String> {
    for_terminal(text)
        .lines()
        .map(|l| l.replace('\t', "    "))
        .collect()
}

impl ShowParts {
    /// The parts of `state` (a checkpoint of `thread` in namespace `ns`): the header and the
    /// rest written now, the messages left to [`crate::tui::lazy::Parts::lines`].
    pub fn new(state: crate::read::State, thread: &str, ns: &str) -> Result<ShowParts> {
        let (text, spans) = {
            let mut report = crate::output::show::ShowReport::of(&state, thread, ns, None)?;
            let spans = report.messages.take().map(|(_, s)| s).unwrap_or_default();
            let mut buf = Vec::new();
            crate::output::show::write(&mut buf, Format::Table, &report)?;
            (String::from_utf8_lossy(&buf).into_owned(), spans)
        };
        let mut lines = screen_lines(&text);
        // The header line; the messages come after it.
        let tail = lines.split_off(1.min(lines.len()));
        Ok(ShowParts {
            state,
            spans,
            head: lines,
            tail,
            thread: thread.to_owned(),
        })
    }

    /// The part of message `m` (0-based).
    pub fn part_of(m: usize) -> usize {
        m + 1
    }

    /// The `ShowParts` behind `parts`, if that is what they are.
    pub fn of_parts(parts: &dyn crate::tui::lazy::Parts) -> Option<&ShowParts> {
        parts.as_any().downcast_ref()
    }

    /// How many messages the chat has.
    pub fn message_count(&self) -> usize {
        self.spans.len()
    }

    /// The tokens by `counter` of messages `from..from + n` (as many as there are), as
    /// `tokens --thread` counts them, from the messages already read.
    pub fn count_tokens(
        &self,
        counter: crate::tokens::Counter,
        from: usize,
        n: usize,
    ) -> Result<Vec<crate::output::tokens::MessageTokens>> {
        let list = self.state.messages.list();
        let end = from.saturating_add(n).min(self.spans.len());
        let read = |i: usize| match (list, self.spans.get(from + i)) {
            (Some(list), Some(span)) => list.message(from + i, span),
            _ => anyhow::bail!("no message {}", from + i),
        };
        let mut report = crate::jobs::tokens::per_message(
            &self.thread,
            end.saturating_sub(from),
            &read,
            counter,
            Some(&preview),
        )?;
        for m in &mut report.messages {
            m.index += from;
        }
        Ok(report.messages)
    }

    /// `tokens --thread`'s table of `messages` (every message counted by `counter`).
    pub fn tokens_table(
        &self,
        counter: crate::tokens::Counter,
        messages: Vec<crate::output::tokens::MessageTokens>,
    ) -> TokensTable {
        TokensTable::new(counter, messages)
    }
}

/// The per-message tokens of a checkpoint: `tokens --thread`'s table, laid out as it prints
/// it (its columns, headers and total line) for the width of the screen: the text column
/// gives way and wraps at word boundaries, so that the table fits.
pub struct TokensTable {
    counter: String,
    total: u64,
    list_overhead: u64,
    messages: Vec<crate::output::tokens::MessageTokens>,
}

/// The text column of the tokens table is never narrower than this (the table is then
/// wider than the screen and its rows wrap).
const TOKENS_TEXT_MIN: usize = 12;

impl TokensTable {
    /// The table of `messages` counted by `counter`.
    pub fn new(
        counter: crate::tokens::Counter,
        messages: Vec<crate::output::tokens::MessageTokens>,
    ) -> TokensTable {
        TokensTable {
            counter: counter.name(),
            total: counter.list_overhead() + messages.iter().map(|m| m.tokens).sum::<u64>(),
            list_overhead: counter.list_overhead(),
            messages,
        }
    }

    /// The table's lines for a screen `columns` wide: `tokens --thread`'s text where it fits
    /// (each cell padded by a blank on both sides, numbers aligned right), the text column
    /// narrowed to the room left and wrapped.
    pub fn lines(&self, columns: usize) -> Vec<String> {
        use crate::tui::width::{pad, pad_left, width, wrap};
        let counter = format!("tokens ({})", self.counter).to_uppercase();
        let headers = [
            "#".to_owned(),
            "TYPE".into(),
            "ID".into(),
            counter,
            "TEXT".into(),
        ];
        let rows: Vec<[String; 5]> = self
            .messages
            .iter()
            .enumerate()
            .map(|(i, m)| {
                [
                    i.to_string(),
                    m.kind.to_owned(),
                    crate::output::human::id(m.id.as_deref().unwrap_or("-")),
                    m.tokens.to_string(),
                    for_terminal(&m.text).replace('\t', "    "),
                ]
            })
            .collect();
        let mut widths = headers.clone().map(|h| width(&h));
        for r in &rows {
            for (w, c) in widths.iter_mut().zip(r) {
                *w = (*w).max(width(c));
            }
        }
        // Each column is its cells and a blank on both sides.
        let fixed: usize = widths[..4].iter().map(|w| w + 2).sum();
        let text = widths[4].min(columns.saturating_sub(fixed + 1).max(TOKENS_TEXT_MIN));
        let right = [true, false, false, true];
        let line = |cells: [&str; 4], text_row: &str| -> String {
            let mut l = String::new();
            for (i, c) in cells.iter().enumerate() {
                l.push(' ');
                l.push_str(&if right[i] {
                    pad_left(c, widths[i])
                } else {
                    pad(c, widths[i])
                });
                l.push(' ');
            }
            l.push(' ');
            l.push_str(text_row);
            l.trim_end().to_owned()
        };
        let mut out = vec![line(
            [&headers[0], &headers[1], &headers[2], &headers[3]],
            &headers[4],
        )];
        for r in &rows {
            let text_rows = wrap(&r[4], text);
            for (k, t) in text_rows.iter().enumerate() {
                let cells = if k == 0 {
                    [r[0].as_str(), &r[1], &r[2], &r[3]]
                } else {
                    ["", "", "", ""]
                };
                out.push(line(cells, t));
            }
        }
        let extra = if self.list_overhead > 0 {
            format!(" (including {} for the reply priming)", self.list_overhead)
        } else {
            String::new()
        };
        out.push(format!(
            "total: {} tokens ({}){extra}",
            self.total, self.counter
        ));
        out
    }
}

impl crate::tui::lazy::Parts for ShowParts {
    fn count(&self) -> usize {
        self.spans.len() + 2
    }

    fn lines(&self, i: usize) -> Vec<String> {
        if i == 0 {
            return self.head.clone();
        }
        if i == self.spans.len() + 1 {
            return self.tail.clone();
        }
        let m = i - 1;
        let rendered = match (self.state.messages.list(), self.spans.get(m)) {
            (Some(list), Some(span)) => list
                .message(m, span)
                .map(|msg| crate::output::show::pretty(&msg)),
            _ => Err(anyhow::anyhow!("no message {m}")),
        };
        match rendered {
            Ok(text) => {
                let mut lines = vec![String::new()];
                lines.extend(screen_lines(&text));
                lines
            }
            Err(e) => vec![
                String::new(),
                crate::output::sanitize::one_line(&format!("message {m} could not be read: {e:#}")),
            ],
        }
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}
