//! Run claims: which app connection (by its session token) may write a run.

use std::sync::Arc;

use super::{ClaimVerdict, ConnId, Hub, Inner, MAX_CLAIMS};

impl Hub {
    /// Whether some attached connection carries `token`.
    pub fn token_attached(&self, token: &str) -> bool {
        self.lock().apps.values().any(|a| a.token == token)
    }

    /// Records a claim, forgetting the oldest beyond [`MAX_CLAIMS`].
    pub(super) fn claim(inner: &mut Inner, run_id: &str, token: &str) {
        if inner
            .claims
            .insert(run_id.to_owned(), Arc::from(token))
            .is_none()
        {
            inner.claim_order.push_back(run_id.to_owned());
            while inner.claim_order.len() > MAX_CLAIMS {
                if let Some(old) = inner.claim_order.pop_front() {
                    inner.claims.remove(&old);
                }
            }
        }
    }

    /// How many claims the hub remembers.
    pub fn claim_count(&self) -> usize {
        self.lock().claims.len()
    }

    /// Checks the claim of `run_id` for `conn`.
    pub fn check_claim(&self, conn: ConnId, run_id: &str) -> ClaimVerdict {
        let inner = self.lock();
        let Some(app) = inner.apps.get(&conn) else {
            return ClaimVerdict::Refused;
        };
        match inner.claims.get(run_id) {
            Some(owner) if **owner == *app.token => ClaimVerdict::Allowed,
            Some(_) => ClaimVerdict::Refused,
            None => ClaimVerdict::Unknown,
        }
    }

    /// Settles an unknown claim with what the database says: `stored` is
    /// `None` when the run does not exist, `Some(claim)` when it does.
    pub fn settle_claim(
        &self,
        conn: ConnId,
        run_id: &str,
        stored: Option<Option<String>>,
    ) -> ClaimVerdict {
        let mut inner = self.lock();
        let Some(token) = inner.apps.get(&conn).map(|a| a.token.clone()) else {
            return ClaimVerdict::Refused;
        };
        if let Some(owner) = inner.claims.get(run_id) {
            return if **owner == *token {
                ClaimVerdict::Allowed
            } else {
                ClaimVerdict::Refused
            };
        }
        match stored {
            Some(Some(owner)) if owner != token => ClaimVerdict::Refused,
            _ => {
                Self::claim(&mut inner, run_id, &token);
                ClaimVerdict::Allowed
            }
        }
    }
}
