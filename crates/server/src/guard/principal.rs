//! Who a request acts for, from the credential it carries: the person (the control token),
//! the agent (the agent token) or nobody. The guard ([`crate::guard`]) puts the
//! [`Principal`] into every request's extensions; handlers read it to record who wrote and
//! to decide what a read may do.
//!
//! The agent token (`<home>/run/agent-<port>.json`, written beside the control token's
//! file) is what agents get: the SDK's memory client and `mindgate mcp` use it. It reaches
//! the memory API (recorded as `agent`), the reads, `/mcp`, and the resume of held gates
//! (`mindgate mcp --allow-control`) and the annotations (recorded as an agent's); a person's acts answer 403 to it: validating or
//! rejecting a quarantined memory (forced or not), and every other state change
//! (breakpoints, the mode, replays, runs, …).

use axum::http::Method;
use mindgate_memory::Actor;
use sha2::{Digest, Sha256};

/// The credential a request carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Principal {
    /// The person: the control token (the viewer, the CLI, scripts).
    Person,
    /// An agent: the agent token.
    Agent,
    /// No token (a read on a loopback server: any web page can make a browser send one).
    Anonymous,
}

impl Principal {
    /// Who a memory write by this principal is recorded as (`None`: anonymous, which may
    /// not write).
    pub fn actor(self) -> Option<Actor> {
        match self {
            Principal::Person => Some(Actor::User),
            Principal::Agent => Some(Actor::Agent),
            Principal::Anonymous => None,
        }
    }
}

/// The agent token of a server whose control token is `control`: a one-way function of it
/// (SHA-256 of a fixed label and the token, 32 hex digits), so it never reveals the
/// control token, and instances sharing one control token (`MINDGATE_TOKEN`) share one
/// agent token too.
pub fn agent_token_for(control: &str) -> String {
    let mut hash = Sha256::new();
    hash.update(b"mindgate agent token v1\n");
    hash.update(control.as_bytes());
    hash.finalize()
        .iter()
        .take(16)
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Why the agent token may not make this request (`None`: it may).
pub fn agent_refusal(method: &Method, path: &str) -> Option<&'static str> {
    if matches!(*method, Method::GET | Method::HEAD) {
        return None;
    }
    if let Some(rest) = path.strip_prefix("/api/memory/") {
        let person_only = rest.starts_with("records/")
            && (rest.ends_with("/validate")
                || rest.ends_with("/reject")
                || rest.ends_with("/conflict"));
        return person_only.then_some(
            "validating or rejecting a quarantined memory (forced or not), or deciding a \
             conflict between facts, is a person's act: the agent token cannot; use the \
             viewer, `mindgate memory validate|reject` or the control token",
        );
    }
    let mcp = path == "/mcp" || path.starts_with("/mcp/");
    let resume =
        path.starts_with("/api/runs/") && path.ends_with("/resume") && path.contains("/pauses/");
    let annotation = path == "/api/annotations" || path.starts_with("/api/annotations/");
    if mcp || resume || annotation {
        return None;
    }
    Some(
        "the agent token reaches the memory API, reads, /mcp and the resume of held gates; \
         this request needs the person's control token",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_agent_token_is_stable_distinct_and_hides_the_control_token() {
        let a = agent_token_for("0123456789abcdef0123456789abcdef");
        assert_eq!(a, agent_token_for("0123456789abcdef0123456789abcdef"));
        assert_ne!(a, agent_token_for("0123456789abcdef0123456789abcdee"));
        assert_eq!(a.len(), 32);
        assert!(!a.contains("0123456789abcdef"));
    }

    #[test]
    fn the_agent_token_never_reaches_a_persons_acts() {
        let post = Method::POST;
        for path in [
            "/api/memory/records/f1/validate",
            "/api/memory/records/f1/reject",
            "/api/memory/records/f1/conflict",
            "/api/mode",
            "/api/breakpoints",
            "/api/runs/r1/replay",
            "/api/datasets",
            "/api/datasets/golden/examples",
        ] {
            assert!(agent_refusal(&post, path).is_some(), "{path}");
        }
        for path in [
            "/api/memory/facts",
            "/api/memory/records/f1/supersede",
            "/api/memory/records/f1/forget",
            "/api/memory/sessions/s1/messages",
            "/mcp",
            "/api/runs/r1/pauses/p1/resume",
        ] {
            assert_eq!(agent_refusal(&post, path), None, "{path}");
        }
        assert_eq!(agent_refusal(&Method::GET, "/api/mode"), None);
    }
}
