//! Instances: registration, the heartbeat, and the reaping of instances that stopped.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use postgres::Client;
use tokio::sync::mpsc::UnboundedSender;

use crate::notice::{self, Notice};
use crate::schema::{self, secs};
use crate::{ClusterError, ClusterEvent, InstanceInfo, Result, Shared};

/// Writes this instance's row.
pub(crate) fn register(client: &mut Client, id: &str, addr: &str, version: &str) -> Result<()> {
    client.execute(
        "INSERT INTO mindgate_instances (id, addr, version) VALUES ($1, $2, $3) \
         ON CONFLICT (id) DO UPDATE SET heartbeat_at = now()",
        &[&id, &addr, &version],
    )?;
    Ok(())
}

/// Removes the instances whose heartbeat is older than `stale` (never `me`) and their
/// gates, announcing each gate's release. Returns the removed ids.
pub(crate) fn reap(
    client: &mut Client,
    ch: &str,
    me: &str,
    stale: Duration,
) -> Result<Vec<String>> {
    let mut tx = client.transaction()?;
    let gone: Vec<String> = tx
        .query(
            "DELETE FROM mindgate_instances \
             WHERE id <> $1 AND heartbeat_at < now() - make_interval(secs => $2) RETURNING id",
            &[&me, &secs(stale)],
        )?
        .iter()
        .map(|r| r.get(0))
        .collect();
    // Gates of instances that are gone (reaped now, or earlier by an instance that
    // died before it cleaned up).
    let released = tx.query(
        "DELETE FROM mindgate_pauses p WHERE NOT EXISTS \
           (SELECT 1 FROM mindgate_instances i WHERE i.id = p.instance_id) \
         RETURNING run_id, pause_id, instance_id",
        &[],
    )?;
    for row in &released {
        notice::send(
            &mut tx,
            ch,
            &Notice::Released {
                from: row.get(2),
                run_id: row.get(0),
                pause_id: row.get(1),
            },
        )?;
    }
    tx.commit()?;
    Ok(gone)
}

/// Whether another live instance than `me` had somebody with control watching within
/// `within`.
pub(crate) fn others_watching(
    client: &mut Client,
    me: &str,
    stale: Duration,
    within: Duration,
) -> Result<bool> {
    let row = client.query_one(
        "SELECT EXISTS (SELECT 1 FROM mindgate_instances WHERE id <> $1 \
           AND heartbeat_at > now() - make_interval(secs => $2) \
           AND watched_at > now() - make_interval(secs => $3))",
        &[&me, &secs(stale), &secs(within)],
    )?;
    Ok(row.get(0))
}

/// The live instances.
pub(crate) fn live(client: &mut Client, stale: Duration) -> Result<Vec<InstanceInfo>> {
    let rows = client.query(
        "SELECT id, addr, version, \
           (extract(epoch FROM started_at) * 1000)::bigint, \
           (extract(epoch FROM heartbeat_at) * 1000)::bigint \
         FROM mindgate_instances \
         WHERE heartbeat_at > now() - make_interval(secs => $1) ORDER BY started_at, id",
        &[&secs(stale)],
    )?;
    Ok(rows
        .iter()
        .map(|r| InstanceInfo {
            id: r.get(0),
            addr: r.get(1),
            version: r.get(2),
            started_at: r.get(3),
            heartbeat_at: r.get(4),
        })
        .collect())
}

pub(crate) fn spawn(
    shared: Arc<Shared>,
    events: UnboundedSender<ClusterEvent>,
    addr: String,
    version: String,
) -> Result<JoinHandle<()>> {
    std::thread::Builder::new()
        .name("mindgate-cluster-heartbeat".to_owned())
        .spawn(move || run(&shared, &events, &addr, &version))
        .map_err(ClusterError::Thread)
}

/// Sleeps up to `total`, waking early when the cluster stops. Returns whether it stopped.
fn nap(shared: &Shared, total: Duration) -> bool {
    let until = Instant::now() + total;
    while Instant::now() < until {
        if shared.stop.load(Ordering::SeqCst) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50).min(total));
    }
    shared.stop.load(Ordering::SeqCst)
}

fn run(shared: &Shared, events: &UnboundedSender<ClusterEvent>, addr: &str, version: &str) {
    let mut client: Option<Client> = None;
    while !nap(shared, shared.config.heartbeat) {
        if client.as_ref().is_none_or(Client::is_closed) {
            match schema::connect(&shared.url) {
                Ok(c) => client = Some(c),
                Err(e) => {
                    tracing::warn!(error = %mindgate_errors::error_chain(&e), "cluster heartbeat cannot reach the database");
                    continue;
                }
            }
        }
        let Some(c) = client.as_mut() else { continue };
        if let Err(e) = beat(c, shared, events, addr, version) {
            tracing::warn!(error = %mindgate_errors::error_chain(&e), "cluster heartbeat failed");
        }
    }
}

fn beat(
    c: &mut Client,
    shared: &Shared,
    events: &UnboundedSender<ClusterEvent>,
    addr: &str,
    version: &str,
) -> Result<()> {
    let me = shared.id.as_str();
    let watched = shared.watched.load(Ordering::SeqCst);
    let alive = c.execute(
        "UPDATE mindgate_instances SET heartbeat_at = now(), \
           watched_at = CASE WHEN $2 THEN now() ELSE watched_at END WHERE id = $1",
        &[&me, &watched],
    )?;
    if alive == 0 {
        // Another instance took this one for dead (a late heartbeat) and removed it
        // with its gates: join again, and let the hub announce its gates again.
        register(c, me, addr, version)?;
        tracing::warn!(
            "this instance was taken for dead by the cluster (late heartbeat); joined again"
        );
        let _ = events.send(ClusterEvent::Rejoined);
    }
    let gone = reap(c, &shared.channel, me, shared.config.stale_after)?;
    if !gone.is_empty() {
        let live = live(c, shared.config.stale_after)?
            .into_iter()
            .map(|i| i.id)
            .collect();
        tracing::info!(instances = ?gone, "instances stopped heartbeating; removed");
        let _ = events.send(ClusterEvent::InstancesGone { gone, live });
    }
    Ok(())
}
