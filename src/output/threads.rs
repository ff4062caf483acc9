//! `threads list`'s output: each thread as it comes ([`Listed`], a table, JSON or JSON
//! lines), then the notes under the table ([`notes`]).

use std::io::Write;

use anyhow::Result;

use super::listing::{Listing, Order, Written};
use super::{human, Format};
use crate::jobs::threads::{Report, Rows, Sort, ThreadRow};

/// The columns of the table.
const HEADERS: [&str; 8] = [
    "thread_id",
    "checkpoints",
    "messages",
    "tokens",
    "last_step",
    "updated_at",
    "age",
    "bytes",
];

/// The threads written to `out` as the job gives them ([`Listing`]: in read order as they
/// come, or sorted once all are read).
pub struct Listed<'o> {
    listing: Listing<'o>,
    sort: Sort,
}

impl<'o> Listed<'o> {
    /// The list written to `out` in `format`, in the order `sort` asks for, cut to `limit`.
    pub fn new(out: &'o mut dyn Write, format: Format, sort: Sort, limit: Option<usize>) -> Self {
        let order = match sort {
            Sort::Thread => Order::AsRead,
            _ => Order::Descending,
        };
        Listed {
            listing: Listing::new(out, format, order, limit),
            sort,
        }
    }

    /// Writes what is left (the sorted rows, the table, or "no threads").
    pub fn finish(self) -> Result<Written> {
        self.listing
            .finish(&HEADERS, &[1, 2, 3, 4, 7], Some("no threads"))
    }
}

impl Rows for Listed<'_> {
    fn push(&mut self, r: ThreadRow) -> Result<bool> {
        self.listing.push(
            r.sort_key(self.sort),
            r.edited_at.is_some(),
            &record(&r),
            || cells(&r),
        )
    }

    fn wants_more(&self) -> bool {
        self.listing.wants_more()
    }
}

/// The notes under the list, on stderr (not with `quiet`): the threads marked `*` (a
/// table's, `edited` of them), and those encrypted and read without a key.
pub fn notes(report: &Report, edited: usize, format: Format, quiet: bool) {
    if quiet {
        return;
    }
    if edited > 0 && format == Format::Table {
        super::notes::line(&format!(
            "note: * {} edited by memctl since the app last wrote {}: AGE and UPDATED_AT are the app's last activity, which prune --idle, gc and --min-idle go by (memctl's edits keep the app's time)",
            match edited {
                1 => "1 thread was".to_owned(),
                n => format!("{n} threads were"),
            },
            if edited == 1 { "it" } else { "them" }
        ));
    }
    if report.locked > 0 {
        let (what, their) = match report.locked {
            1 => ("1 thread is".to_owned(), "its"),
            n => (format!("{n} threads are"), "their"),
        };
        super::notes::line(&format!(
            "note: {what} encrypted with AES and {var} is not set: {their} messages and tokens are not shown (last step and time come from the plain metadata and checkpoint ids); set {var} to the app's key to see them",
            var = report.key_var
        ));
    }
}

/// The row in JSON (`age`: seconds since the app's last activity).
fn record(r: &ThreadRow) -> ThreadRecord<'_> {
    ThreadRecord {
        thread_id: &r.thread_id,
        checkpoints: r.checkpoints,
        namespaces: r.namespaces,
        messages: r.messages,
        tokens: r.tokens,
        last_step: r.last_step,
        updated_at: r.updated_at.as_ref().map(human::utc),
        age_seconds: r.age,
        edited_by_memctl: r.edited_at.is_some(),
        edited_at: r.edited_at.as_ref().map(human::utc),
        bytes: r.bytes,
    }
}

/// The row's table cells ([`HEADERS`]).
fn cells(r: &ThreadRow) -> Vec<String> {
    vec![
        human::id(&r.thread_id),
        r.checkpoints.to_string(),
        r.messages.map_or("-".into(), |m| m.to_string()),
        r.tokens.map_or("-".into(), |m| m.to_string()),
        r.last_step.map_or("-".into(), |s| s.to_string()),
        r.updated_at.as_ref().map_or("-".into(), human::utc),
        // `*`: the latest state is memctl's edit (see the note below the table).
        match (r.age, r.edited_at.is_some()) {
            (None, _) => "-".into(),
            (Some(a), false) => human::age(a),
            (Some(a), true) => format!("{}*", human::age(a)),
        },
        human::bytes(r.bytes),
    ]
}

/// One thread of `threads list` in JSON.
#[derive(serde::Serialize)]
struct ThreadRecord<'a> {
    thread_id: &'a str,
    checkpoints: u64,
    namespaces: u64,
    messages: Option<usize>,
    tokens: Option<u64>,
    last_step: Option<i64>,
    /// The app's last activity (what prune --idle and gc --min-idle go by).
    updated_at: Option<String>,
    age_seconds: Option<i64>,
    /// The latest state is an edit memctl made (trim, rm, summarize, forget).
    edited_by_memctl: bool,
    /// When memctl made that edit.
    edited_at: Option<String>,
    bytes: u64,
}
