//! The HTTP accept loop: a connection cap (total and per client IP), a
//! header-read timeout that also closes idle keep-alive connections, and
//! graceful shutdown on a cancellation token.
//!
//! `axum::serve` has none of these knobs, so connections are served here with
//! hyper's HTTP/1 connection builder (with upgrades, for the WebSockets). A
//! connection's slot is held by its socket, so an upgraded WebSocket keeps
//! counting until it closes. A connection over the cap is answered
//! `503 Service Unavailable` with `Retry-After` and closed, with a
//! rate-limited warning in the log, so descriptors stay bounded and the client
//! learns why.

use std::collections::HashMap;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::config::http::HttpLimits;

/// How long a refused connection may take to read its `503` before it is dropped.
const REFUSAL_LINGER: Duration = Duration::from_millis(500);
/// Most refused connections being answered at once (beyond that they are just closed).
const MAX_REFUSALS_IN_FLIGHT: usize = 64;
/// At most one "connection limit reached" warning per this interval.
const REFUSAL_LOG_EVERY: Duration = Duration::from_secs(10);
/// Pause after a failed `accept` (e.g. out of descriptors) before trying again.
const ACCEPT_ERROR_BACKOFF: Duration = Duration::from_millis(50);

/// The answer to a connection over the cap.
const REFUSAL: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\n\
content-type: application/json\r\n\
retry-after: 1\r\n\
connection: close\r\n\
content-length: 87\r\n\
\r\n\
{\"error\":\"too many open connections to mindgate; try again later\",\"code\":\"unavailable\"}";

/// Open connections per client IP.
#[derive(Debug, Default)]
struct PerIp {
    open: Mutex<HashMap<IpAddr, usize>>,
}

impl PerIp {
    /// Takes a slot for `ip`, or `None` if it already has `max` connections.
    fn take(self: &Arc<Self>, ip: IpAddr, max: usize) -> Option<IpSlot> {
        let mut open = self.open.lock().unwrap_or_else(|p| p.into_inner());
        let n = open.entry(ip).or_insert(0);
        if *n >= max {
            return None;
        }
        *n += 1;
        Some(IpSlot {
            table: Arc::clone(self),
            ip,
        })
    }
}

/// One connection's place in [`PerIp`]; freed on drop.
#[derive(Debug)]
struct IpSlot {
    table: Arc<PerIp>,
    ip: IpAddr,
}

impl Drop for IpSlot {
    fn drop(&mut self) {
        let mut open = self.table.open.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(n) = open.get_mut(&self.ip) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                open.remove(&self.ip);
            }
        }
    }
}

/// A socket that holds its connection slots until it is dropped — also after
/// an upgrade to a WebSocket, which takes the socket over.
#[derive(Debug)]
struct CountedStream {
    stream: TcpStream,
    _total: OwnedSemaphorePermit,
    _per_ip: IpSlot,
}

impl AsyncRead for CountedStream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_read(cx, buf)
    }
}

impl AsyncWrite for CountedStream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }
}

/// Counts refusals and keeps their warning to one per [`REFUSAL_LOG_EVERY`].
#[derive(Debug, Default)]
struct RefusalLog {
    last: Option<Instant>,
    unlogged: u64,
}

impl RefusalLog {
    fn refused(&mut self, peer: SocketAddr, why: &str, limits: &HttpLimits) {
        self.unlogged += 1;
        let now = Instant::now();
        if self
            .last
            .is_some_and(|t| now.duration_since(t) < REFUSAL_LOG_EVERY)
        {
            return;
        }
        tracing::warn!(
            %peer,
            refused = self.unlogged,
            max_connections = limits.max_connections,
            max_connections_per_ip = limits.max_connections_per_ip,
            "connection limit reached ({why}); answering 503 and closing \
             (raise MINDGATE_MAX_CONNECTIONS / MINDGATE_MAX_CONNECTIONS_PER_IP if this is legitimate)"
        );
        self.last = Some(now);
        self.unlogged = 0;
    }
}

/// Serves `app` on `listener` until `shutdown` is cancelled, then lets open
/// requests finish (WebSockets and streams watch the same token) and returns
/// once every connection has closed.
pub async fn serve(
    listener: TcpListener,
    app: Router,
    limits: HttpLimits,
    shutdown: CancellationToken,
) -> io::Result<()> {
    let total = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    let per_ip = Arc::new(PerIp::default());
    let refusals = Arc::new(Semaphore::new(MAX_REFUSALS_IN_FLIGHT));
    let connections = TaskTracker::new();
    let mut refusal_log = RefusalLog::default();
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout);
    loop {
        let (stream, peer) = tokio::select! {
            _ = shutdown.cancelled() => break,
            accepted = listener.accept() => match accepted {
                Ok(pair) => pair,
                Err(e) => {
                    // Out of descriptors, or a connection reset before accept:
                    // back off briefly instead of spinning.
                    tracing::warn!(error = %e, "accepting a connection failed");
                    tokio::time::sleep(ACCEPT_ERROR_BACKOFF).await;
                    continue;
                }
            },
        };
        let Ok(total_permit) = Arc::clone(&total).try_acquire_owned() else {
            refusal_log.refused(peer, "all connections in use", &limits);
            refuse(stream, &refusals, &connections);
            continue;
        };
        let Some(ip_slot) = per_ip.take(peer.ip(), limits.max_connections_per_ip) else {
            refusal_log.refused(peer, "this client IP has too many", &limits);
            refuse(stream, &refusals, &connections);
            continue;
        };
        let _ = stream.set_nodelay(true);
        let io = TokioIo::new(CountedStream {
            stream,
            _total: total_permit,
            _per_ip: ip_slot,
        });
        let service = TowerToHyperService::new(app.clone());
        let connection = http.serve_connection(io, service).with_upgrades();
        let stop = shutdown.clone();
        connections.spawn(async move {
            let mut connection = std::pin::pin!(connection);
            let result = tokio::select! {
                r = connection.as_mut() => r,
                _ = stop.cancelled() => {
                    connection.as_mut().graceful_shutdown();
                    connection.await
                }
            };
            if let Err(e) = result {
                tracing::debug!(%peer, error = %e, "connection ended with an error");
            }
        });
    }
    drop(listener);
    connections.close();
    connections.wait().await;
    Ok(())
}

/// Answers `503` on a connection over the cap and closes it; if too many
/// refusals are already in flight, just closes it.
fn refuse(stream: TcpStream, refusals: &Arc<Semaphore>, tasks: &TaskTracker) {
    let Ok(permit) = Arc::clone(refusals).try_acquire_owned() else {
        return;
    };
    tasks.spawn(async move {
        let _permit = permit;
        let mut stream = stream;
        let _ = tokio::time::timeout(REFUSAL_LINGER, async {
            stream.write_all(REFUSAL).await?;
            stream.shutdown().await?;
            // Read what the client sent, so closing does not reset the
            // connection before it has read the answer.
            let mut sink = [0u8; 4096];
            while stream.read(&mut sink).await? > 0 {}
            Ok::<(), io::Error>(())
        })
        .await;
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_refusal_is_a_complete_http_response() {
        let text = std::str::from_utf8(REFUSAL).unwrap_or_default();
        let (head, body) = text.split_once("\r\n\r\n").unwrap_or_default();
        let declared = head
            .lines()
            .find_map(|l| l.strip_prefix("content-length: "))
            .and_then(|n| n.parse::<usize>().ok());
        assert_eq!(declared, Some(body.len()));
        let body: serde_json::Value = serde_json::from_str(body).unwrap_or_default();
        assert_eq!(
            body["code"],
            mindgate_errors::ErrorCode::Unavailable.as_str(),
            "{body}"
        );
    }

    #[test]
    fn per_ip_slots_are_capped_and_freed() {
        let table = Arc::new(PerIp::default());
        let ip: IpAddr = [127, 0, 0, 1].into();
        let a = table.take(ip, 2);
        let b = table.take(ip, 2);
        assert!(a.is_some() && b.is_some());
        assert!(table.take(ip, 2).is_none());
        assert!(table.take([127, 0, 0, 2].into(), 2).is_some());
        drop(a);
        assert!(table.take(ip, 2).is_some());
    }
}
