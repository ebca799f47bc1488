//! Breakpoint matchers: the one implementation of their semantics.
//!
//! * every present field must match, absent fields match anything;
//! * `point` defaults to `before`, so `{}` means "pause before every node";
//! * matchers are deduplicated and cleared by exact equality of `kind`, `name`
//!   and `point` as written (an absent `point` differs from `"before"` here).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::extra::Extra;
use crate::kinds::{NodeKind, PausePoint};

/// A breakpoint: which nodes at which point should hold.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct BreakpointMatcher {
    /// Match only nodes of this kind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<NodeKind>,
    /// Match only nodes with this name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Gate point; `before` when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub point: Option<PausePoint>,
    /// Unknown fields, kept as received (ignored by matching and equality).
    #[serde(flatten)]
    pub extra: Extra,
}

/// Equality as the protocol defines it: `kind`, `name` and `point` as written.
impl PartialEq for BreakpointMatcher {
    fn eq(&self, other: &Self) -> bool {
        self.kind == other.kind && self.name == other.name && self.point == other.point
    }
}

impl Eq for BreakpointMatcher {}

/// The node a gate belongs to, as a matcher sees it.
#[derive(Debug, Clone, Copy)]
pub struct GateTarget<'a> {
    /// Node kind.
    pub kind: NodeKind,
    /// Node name.
    pub name: &'a str,
}

impl BreakpointMatcher {
    /// Pause on any node at `point`.
    pub fn at(point: PausePoint) -> Self {
        BreakpointMatcher {
            point: Some(point),
            ..Default::default()
        }
    }

    /// The default matcher a viewer arms: pause on every error.
    pub fn on_error() -> Self {
        Self::at(PausePoint::Error)
    }

    /// Restricts to a kind.
    #[must_use]
    pub fn kind(mut self, kind: NodeKind) -> Self {
        self.kind = Some(kind);
        self
    }

    /// Restricts to a node name.
    #[must_use]
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// The effective point (`before` when absent).
    pub fn effective_point(&self) -> PausePoint {
        self.point.unwrap_or_default()
    }

    /// Whether this matcher fires for `target` at `point`.
    pub fn matches(&self, point: PausePoint, target: GateTarget<'_>) -> bool {
        self.effective_point() == point
            && self.kind.is_none_or(|k| k == target.kind)
            && self.name.as_deref().is_none_or(|n| n == target.name)
    }
}

/// An ordered, deduplicated set of breakpoints.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(transparent)]
pub struct BreakpointSet(Vec<BreakpointMatcher>);

impl BreakpointSet {
    /// An empty set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a matcher unless an equal one is present. Returns whether it was added.
    pub fn add(&mut self, matcher: BreakpointMatcher) -> bool {
        if self.0.contains(&matcher) {
            return false;
        }
        self.0.push(matcher);
        true
    }

    /// Removes the matcher equal to `matcher`. Returns whether one was removed.
    pub fn remove(&mut self, matcher: &BreakpointMatcher) -> bool {
        let before = self.0.len();
        self.0.retain(|m| m != matcher);
        self.0.len() != before
    }

    /// Replaces the whole set (deduplicating).
    pub fn replace(&mut self, matchers: impl IntoIterator<Item = BreakpointMatcher>) {
        self.0.clear();
        for m in matchers {
            self.add(m);
        }
    }

    /// Whether any matcher fires for `target` at `point`.
    pub fn matches(&self, point: PausePoint, target: GateTarget<'_>) -> bool {
        self.0.iter().any(|m| m.matches(point, target))
    }

    /// The matchers, in insertion order.
    pub fn as_slice(&self) -> &[BreakpointMatcher] {
        &self.0
    }

    /// Number of matchers.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl FromIterator<BreakpointMatcher> for BreakpointSet {
    fn from_iter<I: IntoIterator<Item = BreakpointMatcher>>(iter: I) -> Self {
        let mut set = BreakpointSet::new();
        set.replace(iter);
        set
    }
}
