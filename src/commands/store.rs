//! `memctl store …`: the LangGraph Store (long-term memory) of a SQLite file or a Postgres
//! database: flags -> [`crate::jobs::store`] -> [`crate::output::store`].

use std::io::Write;

use anyhow::Result;

use crate::cli::{GlobalArgs, StoreCommand};
use crate::jobs::store::{get, ls, namespaces, rm, sweep};
use crate::output::notes::Terminal;
use crate::output::store as report;
use crate::output::{resolve_format, Format};

/// Runs a `store` subcommand.
pub fn run(g: &GlobalArgs, cmd: &StoreCommand, out: &mut dyn Write) -> Result<()> {
    let format = resolve_format(g.format);
    let ctx = g.ctx();
    let sink = g.sink(false);
    match cmd {
        StoreCommand::Namespaces(a) => {
            let req = namespaces::Request {
                prefix: a.prefix.clone(),
                max_depth: a.max_depth,
            };
            report::namespaces(out, format, &namespaces::run(&req, &ctx, &sink)?)
        }
        StoreCommand::Ls(a) => {
            let req = ls::Request {
                namespace: a.namespace.clone(),
                limit: a.limit,
            };
            // A table is laid out once every row is in.
            let mut items = Vec::new();
            let found = ls::run(&req, &ctx, &sink, &mut |i| {
                items.push(i);
                Ok(())
            })?;
            if found.items == 0 && format == Format::Table {
                return report::namespaces(out, format, &found.under);
            }
            report::items(out, format, &items)
        }
        StoreCommand::Get(a) => {
            let req = get::Request {
                namespace: a.namespace.clone(),
                key: a.key.clone(),
            };
            // The note on an expired item is printed with --quiet too.
            let sink = Terminal {
                quiet: false,
                ..sink
            };
            report::value(out, format, &get::run(&req, &ctx, &sink)?)
        }
        StoreCommand::Rm(a) => {
            let req = rm::Request {
                namespace: a.namespace.clone(),
                keys: a.keys.clone(),
                dry_run: a.dry_run,
            };
            // The note on a key the namespace lacks is printed with --quiet too.
            let sink = Terminal {
                yes: a.yes,
                quiet: false,
            };
            report::removal(
                out,
                format,
                &rm::run(&req, &ctx, &sink)?,
                "Nothing to delete: no such item.",
            )
        }
        StoreCommand::Sweep(a) => {
            let req = sweep::Request { dry_run: a.dry_run };
            report::removal(
                out,
                format,
                &sweep::run(&req, &ctx, &sink)?,
                "Nothing to sweep: no item has expired.",
            )
        }
    }
}
