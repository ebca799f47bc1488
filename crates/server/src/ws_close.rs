//! What a WebSocket read error tells the peer: RFC 6455 close codes for frames
//! the server refuses, shared by `/ingest` and `/ws/ui`.
//!
//! A client that sends a text frame that is not UTF-8 gets `1007`; one that
//! breaks the framing (an unmasked frame, reserved bits, an unknown opcode, a
//! fragmented or oversized control frame, a stray continuation) gets `1002`;
//! one whose message is over the size limit gets `1009`. Each close carries a
//! reason naming the fault. I/O errors and vanished peers get nothing: there is
//! nobody left to tell.

use std::error::Error as _;

use axum::extract::ws::{CloseFrame, Message, Utf8Bytes, WebSocket};
use tokio_tungstenite::tungstenite::Error as WsError;
use tokio_tungstenite::tungstenite::error::ProtocolError;

/// The text frame is not valid UTF-8.
pub const INVALID_DATA: u16 = 1007;
/// The peer broke the WebSocket protocol.
pub const PROTOCOL: u16 = 1002;
/// The message is over the size limit.
pub const TOO_BIG: u16 = 1009;

/// Longest close reason in bytes (a control frame carries at most 125: two for the code).
const MAX_REASON_BYTES: usize = 123;

/// The close code and reason a read error calls for, or `None` when the
/// connection is simply gone.
pub fn for_read_error(err: &axum::Error) -> Option<(u16, String)> {
    let ws = err.source()?.downcast_ref::<WsError>()?;
    let (code, reason) = match ws {
        WsError::Utf8(detail) => (
            INVALID_DATA,
            format!("text frame is not valid UTF-8: {detail}"),
        ),
        WsError::Capacity(detail) => (TOO_BIG, format!("message too big: {detail}")),
        WsError::Protocol(
            ProtocolError::ResetWithoutClosingHandshake
            | ProtocolError::SendAfterClosing
            | ProtocolError::ReceivedAfterClosing,
        ) => return None,
        WsError::Protocol(p) => (PROTOCOL, format!("protocol error: {p}")),
        WsError::AttackAttempt => (PROTOCOL, "protocol error: attack attempt".to_owned()),
        _ => return None,
    };
    Some((code, truncate(reason)))
}

/// Sends a close frame (best effort: the peer may already be gone).
pub async fn send(socket: &mut WebSocket, code: u16, reason: &str) {
    let _ = socket
        .send(Message::Close(Some(CloseFrame {
            code,
            reason: Utf8Bytes::from(reason),
        })))
        .await;
}

/// Cuts `reason` to [`MAX_REASON_BYTES`] on a character boundary.
fn truncate(mut reason: String) -> String {
    if reason.len() > MAX_REASON_BYTES {
        let mut end = MAX_REASON_BYTES;
        while !reason.is_char_boundary(end) {
            end -= 1;
        }
        reason.truncate(end);
    }
    reason
}

#[cfg(test)]
mod tests {
    use super::*;

    fn axum_error(e: WsError) -> axum::Error {
        axum::Error::new(e)
    }

    #[test]
    fn read_errors_map_to_close_codes() {
        let utf8 = for_read_error(&axum_error(WsError::Utf8("invalid byte".into())));
        assert_eq!(utf8.map(|(c, _)| c), Some(INVALID_DATA));
        let unmasked = for_read_error(&axum_error(WsError::Protocol(
            ProtocolError::UnmaskedFrameFromClient,
        )));
        let (code, reason) = unmasked.unwrap_or_default();
        assert_eq!(code, PROTOCOL);
        assert!(reason.starts_with("protocol error:"), "{reason}");
        let reserved = for_read_error(&axum_error(WsError::Protocol(
            ProtocolError::NonZeroReservedBits,
        )));
        assert_eq!(reserved.map(|(c, _)| c), Some(PROTOCOL));
        let gone = for_read_error(&axum_error(WsError::Protocol(
            ProtocolError::ResetWithoutClosingHandshake,
        )));
        assert_eq!(gone, None);
        assert_eq!(for_read_error(&axum_error(WsError::ConnectionClosed)), None);
    }

    #[test]
    fn reasons_fit_a_control_frame() {
        let long = truncate("é".repeat(200));
        assert!(long.len() <= MAX_REASON_BYTES);
        assert!(long.chars().all(|c| c == 'é'));
    }
}
