//! `memctl rekey`: every stored value put under a new AES key, encrypted for the first time,
//! or decrypted (`--decrypt`); the engine is [`crate::jobs::rekey`], the report
//! `output::rekey`'s.

use std::io::Write;

use anyhow::Result;

use crate::cli::{GlobalArgs, RekeyArgs};
use crate::jobs::rekey::{self, Request};
use crate::output::{self};

/// Runs `rekey`.
pub fn run(g: &GlobalArgs, args: &RekeyArgs, out: &mut dyn Write) -> Result<()> {
    let req = Request {
        old_key_env: args.old_key_env.clone(),
        new_key_env: args.new_key_env.clone(),
        decrypt: args.decrypt,
        dry_run: args.dry_run,
        batch: args.batch,
        vacuum: args.vacuum,
    };
    let sink = g.sink(args.yes);
    let report = rekey::run(&req, &g.ctx(), &sink)?;
    output::rekey::render(out, output::resolve_format(g.format), &report.rekey)?;
    report.verdict()
}
