//! A run named on the command line: its whole id or a unique prefix of it. `mindgate diff`,
//! `mindgate export` (and every command that takes a run id) resolve their argument here.

use anyhow::bail;
use mindgate_store::{Database, RunStore};

/// Candidates listed when a prefix matches several runs.
const SHOWN_CANDIDATES: u32 = 10;

/// The id of the run `given` names in `store`: the run with exactly that id, else the one
/// run whose id starts with it. None, or several (listed), is an error naming `db`.
pub fn resolve_run_id(store: &RunStore, db: &Database, given: &str) -> anyhow::Result<String> {
    if store.get_run(given)?.is_some() {
        return Ok(given.to_owned());
    }
    let mut found = store.run_ids_with_prefix(given, SHOWN_CANDIDATES + 1)?;
    match found.len() {
        0 => bail!("run {given} not found in {db} (see `mindgate runs`)"),
        1 => Ok(found.remove(0)),
        n => {
            let more = if n > SHOWN_CANDIDATES as usize {
                found.truncate(SHOWN_CANDIDATES as usize);
                " and more"
            } else {
                ""
            };
            bail!(
                "`{given}` is the start of several run ids: {}{more}; give more of the id",
                found.join(", ")
            )
        }
    }
}
