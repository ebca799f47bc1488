//! The worker thread: every write of this instance's shared state, in the order asked.

use std::sync::Arc;
use std::sync::mpsc;
use std::thread::JoinHandle;

use mindgate_protocol::BreakpointSet;
use postgres::Client;
use serde_json::Value;

use crate::notice::{self, Notice};
use crate::schema;
use crate::{
    ClusterError, DebugChange, DebugState, InstanceInfo, Referee, Result, Shared, random_id,
};

/// One request to the worker.
pub(crate) enum Op {
    Announce {
        run_id: String,
        pause_id: String,
        view: Value,
    },
    Retract {
        run_id: String,
        pause_id: String,
    },
    Rehold {
        run_id: String,
        pause_id: String,
    },
    Answer {
        requester: String,
        ticket: String,
        reply: Value,
    },
    Debug(DebugChange),
    Referee {
        run_id: String,
        pause_id: String,
        request: Option<Value>,
        reply: mpsc::SyncSender<Result<Referee>>,
    },
    Instances {
        reply: mpsc::SyncSender<Result<Vec<InstanceInfo>>>,
    },
    OthersWatching {
        within: std::time::Duration,
        reply: mpsc::SyncSender<Result<bool>>,
    },
    Leave {
        reply: mpsc::SyncSender<Result<()>>,
    },
    Vanish {
        reply: mpsc::SyncSender<Result<()>>,
    },
}

pub(crate) fn spawn(
    shared: Arc<Shared>,
    client: Client,
    ops: mpsc::Receiver<Op>,
) -> Result<JoinHandle<()>> {
    std::thread::Builder::new()
        .name("mindgate-cluster-worker".to_owned())
        .spawn(move || run(&shared, client, ops))
        .map_err(ClusterError::Thread)
}

fn run(shared: &Shared, client: Client, ops: mpsc::Receiver<Op>) {
    let mut client = Some(client);
    while let Ok(op) = ops.recv() {
        let last = matches!(op, Op::Leave { .. } | Op::Vanish { .. });
        apply(shared, &mut client, op);
        if last {
            break;
        }
    }
}

/// Runs `f` on the connection, reopening it once when it was lost.
fn with_client<T>(
    shared: &Shared,
    slot: &mut Option<Client>,
    mut f: impl FnMut(&mut Client) -> Result<T>,
) -> Result<T> {
    for attempt in 0..2 {
        if slot.as_ref().is_none_or(Client::is_closed) {
            *slot = Some(schema::connect(&shared.url)?);
        }
        let Some(client) = slot.as_mut() else {
            continue;
        };
        match f(client) {
            Err(ClusterError::Sql(e)) if attempt == 0 && client.is_closed() => {
                tracing::info!(error = %mindgate_errors::error_chain(&e), "cluster connection lost; reopening");
                *slot = None;
            }
            other => return other,
        }
    }
    Err(ClusterError::Stopped)
}

fn apply(shared: &Shared, slot: &mut Option<Client>, op: Op) {
    let me = shared.id.as_str();
    let ch = shared.channel.as_str();
    let outcome = match op {
        Op::Announce {
            run_id,
            pause_id,
            view,
        } => with_client(shared, slot, |c| {
            announce(c, ch, me, &run_id, &pause_id, &view)
        }),
        Op::Retract { run_id, pause_id } => {
            with_client(shared, slot, |c| retract(c, ch, me, &run_id, &pause_id))
        }
        Op::Rehold { run_id, pause_id } => {
            with_client(shared, slot, |c| rehold(c, ch, me, &run_id, &pause_id))
        }
        Op::Answer {
            requester,
            ticket,
            reply,
        } => {
            let notice = Notice::Answer {
                from: me.to_owned(),
                to: requester,
                ticket,
                reply: notice::fit_reply(reply),
            };
            with_client(shared, slot, |c| Ok(notice::send(c, ch, &notice)?))
        }
        Op::Debug(change) => with_client(shared, slot, |c| change_debug(c, ch, me, &change)),
        Op::Referee {
            run_id,
            pause_id,
            request,
            reply,
        } => {
            let verdict = with_client(shared, slot, |c| {
                referee(c, shared, &run_id, &pause_id, request.as_ref())
            });
            let _ = reply.send(verdict);
            Ok(())
        }
        Op::Instances { reply } => {
            let _ = reply.send(with_client(shared, slot, |c| {
                crate::heartbeat::live(c, shared.config.stale_after)
            }));
            Ok(())
        }
        Op::OthersWatching { within, reply } => {
            let _ = reply.send(with_client(shared, slot, |c| {
                crate::heartbeat::others_watching(c, me, shared.config.stale_after, within)
            }));
            Ok(())
        }
        Op::Leave { reply } => {
            let _ = reply.send(with_client(shared, slot, |c| leave(c, ch, me)));
            Ok(())
        }
        Op::Vanish { reply } => {
            let _ = reply.send(Ok(()));
            Ok(())
        }
    };
    if let Err(e) = outcome {
        tracing::warn!(error = %mindgate_errors::error_chain(&e), "a shared hub-state write failed");
    }
}

fn announce(
    c: &mut Client,
    ch: &str,
    me: &str,
    run_id: &str,
    pause_id: &str,
    view: &Value,
) -> Result<()> {
    let mut tx = c.transaction()?;
    tx.execute(
        "INSERT INTO mindgate_pauses (run_id, pause_id, instance_id, view) \
         VALUES ($1, $2, $3, $4::text::jsonb) \
         ON CONFLICT (run_id, pause_id) DO UPDATE SET instance_id = EXCLUDED.instance_id, \
           view = EXCLUDED.view, state = 'held', request = NULL, requested_by = NULL, \
           ticket = NULL",
        &[&run_id, &pause_id, &me, &schema::json_text(view)],
    )?;
    notice::send(
        &mut tx,
        ch,
        &Notice::Held {
            from: me.to_owned(),
            run_id: run_id.to_owned(),
            pause_id: pause_id.to_owned(),
        },
    )?;
    tx.commit()?;
    Ok(())
}

/// Runs `sql` (parameters: run, pause, this instance) on one of this instance's gates and,
/// when it changed a row, announces `notice` in the same transaction.
fn change_own_pause(
    c: &mut Client,
    ch: &str,
    sql: &str,
    (me, run_id, pause_id): (&str, &str, &str),
    notice: Notice,
) -> Result<()> {
    let mut tx = c.transaction()?;
    if tx.execute(sql, &[&run_id, &pause_id, &me])? > 0 {
        notice::send(&mut tx, ch, &notice)?;
    }
    tx.commit()?;
    Ok(())
}

fn retract(c: &mut Client, ch: &str, me: &str, run_id: &str, pause_id: &str) -> Result<()> {
    change_own_pause(
        c,
        ch,
        "DELETE FROM mindgate_pauses WHERE run_id = $1 AND pause_id = $2 AND instance_id = $3",
        (me, run_id, pause_id),
        Notice::Released {
            from: me.to_owned(),
            run_id: run_id.to_owned(),
            pause_id: pause_id.to_owned(),
        },
    )
}

fn rehold(c: &mut Client, ch: &str, me: &str, run_id: &str, pause_id: &str) -> Result<()> {
    change_own_pause(
        c,
        ch,
        "UPDATE mindgate_pauses SET state = 'held', request = NULL, requested_by = NULL, \
           ticket = NULL \
         WHERE run_id = $1 AND pause_id = $2 AND instance_id = $3",
        (me, run_id, pause_id),
        Notice::Held {
            from: me.to_owned(),
            run_id: run_id.to_owned(),
            pause_id: pause_id.to_owned(),
        },
    )
}

fn change_debug(c: &mut Client, ch: &str, me: &str, change: &DebugChange) -> Result<()> {
    let mut tx = c.transaction()?;
    // The row is locked for this read-modify-write.
    let Some(mut state) = schema::debug_state_for_update(&mut tx)? else {
        return Err(ClusterError::Malformed("no debug state row".to_owned()));
    };
    let mut set = BreakpointSet::new();
    set.replace(state.breakpoints);
    let changed = match change {
        DebugChange::Add(m) => set.add(m.clone()),
        DebugChange::Remove(m) => set.remove(m),
        DebugChange::Mode(mode) => {
            let changed = *mode != state.mode;
            state.mode = *mode;
            changed
        }
    };
    if changed {
        let next = DebugState {
            breakpoints: set.as_slice().to_vec(),
            mode: state.mode,
        };
        let breakpoints = serde_json::to_string(&next.breakpoints)
            .map_err(|e| ClusterError::Malformed(e.to_string()))?;
        tx.execute(
            "UPDATE mindgate_debug SET breakpoints = $1::text::jsonb, mode = $2, version = version + 1 \
             WHERE id = 1",
            &[&breakpoints, &schema::encode_mode(&next)],
        )?;
        notice::send(
            &mut tx,
            ch,
            &Notice::Debug {
                from: me.to_owned(),
            },
        )?;
    }
    tx.commit()?;
    Ok(())
}

fn referee(
    c: &mut Client,
    shared: &Shared,
    run_id: &str,
    pause_id: &str,
    request: Option<&Value>,
) -> Result<Referee> {
    let me = shared.id.as_str();
    let ch = shared.channel.as_str();
    let ticket = random_id();
    let mut tx = c.transaction()?;
    let won = tx.query_opt(
        "UPDATE mindgate_pauses p SET state = 'resuming', request = $3::text::jsonb, requested_by = $4, \
           ticket = $5 \
         WHERE p.run_id = $1 AND p.pause_id = $2 AND p.state = 'held' \
           AND EXISTS (SELECT 1 FROM mindgate_instances i WHERE i.id = p.instance_id \
                       AND i.heartbeat_at > now() - make_interval(secs => $6)) \
         RETURNING p.instance_id",
        &[
            &run_id,
            &pause_id,
            &request.map(schema::json_text),
            &me,
            &ticket,
            &schema::secs(shared.config.stale_after),
        ],
    )?;
    let verdict = match won {
        Some(row) => {
            let owner: String = row.get(0);
            if owner != me {
                notice::send(
                    &mut tx,
                    ch,
                    &Notice::Resume {
                        from: me.to_owned(),
                        to: owner.clone(),
                        run_id: run_id.to_owned(),
                        pause_id: pause_id.to_owned(),
                    },
                )?;
            }
            Referee::Won { owner, ticket }
        }
        None => {
            let row = tx.query_opt(
                "SELECT p.state, EXISTS (SELECT 1 FROM mindgate_instances i \
                   WHERE i.id = p.instance_id \
                     AND i.heartbeat_at > now() - make_interval(secs => $3)) \
                 FROM mindgate_pauses p WHERE p.run_id = $1 AND p.pause_id = $2",
                &[&run_id, &pause_id, &schema::secs(shared.config.stale_after)],
            )?;
            match row {
                None => Referee::Missing,
                Some(r) if r.get::<_, &str>(0) == "resuming" => Referee::Taken,
                Some(r) if !r.get::<_, bool>(1) => Referee::OwnerGone,
                Some(_) => Referee::Taken,
            }
        }
    };
    tx.commit()?;
    Ok(verdict)
}

fn leave(c: &mut Client, ch: &str, me: &str) -> Result<()> {
    let mut tx = c.transaction()?;
    let released = tx.query(
        "DELETE FROM mindgate_pauses WHERE instance_id = $1 RETURNING run_id, pause_id",
        &[&me],
    )?;
    for row in &released {
        notice::send(
            &mut tx,
            ch,
            &Notice::Released {
                from: me.to_owned(),
                run_id: row.get(0),
                pause_id: row.get(1),
            },
        )?;
    }
    tx.execute("DELETE FROM mindgate_instances WHERE id = $1", &[&me])?;
    tx.commit()?;
    Ok(())
}
