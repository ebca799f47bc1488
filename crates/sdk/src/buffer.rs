//! The bounded replay buffer: every event frame, oldest first, drop-oldest.
//!
//! Frames are serialised once, outside any lock, with a placeholder `seq`; the
//! real `seq` is assigned under the buffer lock (so buffer order is seq order)
//! and spliced in when the frame is written to the socket. The buffer doubles
//! as the send queue: the writer keeps a cursor into it, so replay on attach
//! and live sending are the same loop, and a writer that falls behind a full
//! buffer learns exactly which frames it lost (reported as a gap marker).

use std::collections::VecDeque;
use std::sync::Arc;

/// How every frame serialised by [`mindgate_protocol::Envelope::to_json`] with `seq` 0 begins.
pub(crate) const PLACEHOLDER_HEAD: &str = "{\"gm\":1,\"seq\":0,";

/// One serialised event.
#[derive(Debug)]
pub(crate) struct Frame {
    /// The envelope `seq` (kept on replay).
    pub(crate) seq: u64,
    /// The owning run, for gap markers.
    pub(crate) run_id: Arc<str>,
    /// The whole frame as serialised, starting with [`PLACEHOLDER_HEAD`].
    pub(crate) text: String,
}

impl Frame {
    /// The wire text with the real `seq`.
    pub(crate) fn render(&self) -> String {
        let rest = self.text.get(PLACEHOLDER_HEAD.len()..).unwrap_or_default();
        let mut out = String::with_capacity(rest.len() + 40);
        out.push_str("{\"gm\":1,\"seq\":");
        out.push_str(&self.seq.to_string());
        out.push(',');
        out.push_str(rest);
        out
    }
}

/// Events dropped before any viewer saw them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Gap {
    pub(crate) count: u64,
    pub(crate) from_seq: u64,
    pub(crate) to_seq: u64,
    pub(crate) run_id: Arc<str>,
}

/// The ring buffer plus the writer's cursor.
#[derive(Debug)]
pub(crate) struct Ring {
    capacity: usize,
    frames: VecDeque<Arc<Frame>>,
    /// Frames ever pushed: the index the next frame gets.
    pushed: u64,
    /// Frames with an index below this were handed to a writer at least once.
    taken_upto: u64,
    /// The writer's next index while attached.
    cursor: Option<u64>,
    /// Dropped frames no writer ever took.
    unseen: Option<Gap>,
    dropped_total: u64,
}

impl Ring {
    pub(crate) fn new(capacity: usize) -> Self {
        let capacity = capacity.max(1);
        Ring {
            capacity,
            frames: VecDeque::with_capacity(capacity.min(4096)),
            pushed: 0,
            taken_upto: 0,
            cursor: None,
            unseen: None,
            dropped_total: 0,
        }
    }

    fn front_index(&self) -> u64 {
        self.pushed - self.frames.len() as u64
    }

    /// Appends a frame, dropping the oldest when full.
    pub(crate) fn push(&mut self, frame: Arc<Frame>) {
        if self.frames.len() >= self.capacity {
            let index = self.front_index();
            if let Some(old) = self.frames.pop_front() {
                self.dropped_total += 1;
                if index >= self.taken_upto {
                    match &mut self.unseen {
                        Some(gap) => {
                            gap.count += 1;
                            gap.to_seq = old.seq;
                        }
                        None => {
                            self.unseen = Some(Gap {
                                count: 1,
                                from_seq: old.seq,
                                to_seq: old.seq,
                                run_id: old.run_id.clone(),
                            });
                        }
                    }
                }
            }
        }
        self.frames.push_back(frame);
        self.pushed += 1;
    }

    /// A viewer attached: replay everything still buffered, oldest first.
    pub(crate) fn attach(&mut self) {
        self.cursor = Some(self.front_index());
    }

    /// The viewer went away: nothing is sent until the next attach.
    pub(crate) fn detach(&mut self) {
        self.cursor = None;
    }

    /// Whether a writer is attached and has frames to take.
    pub(crate) fn has_pending(&self) -> bool {
        self.cursor.is_some_and(|c| c < self.pushed)
    }

    /// Hands the writer every frame past its cursor (appended to `out`), plus a
    /// gap when frames were dropped unseen. Returns `None` when detached.
    pub(crate) fn take(&mut self, out: &mut Vec<Arc<Frame>>) -> Option<Option<Gap>> {
        let cursor = self.cursor?.max(self.front_index());
        let skip = (cursor - self.front_index()) as usize;
        out.extend(self.frames.iter().skip(skip).cloned());
        self.cursor = Some(self.pushed);
        self.taken_upto = self.taken_upto.max(self.pushed);
        Some(self.unseen.take())
    }

    /// Frames ever pushed (the index the next frame gets).
    pub(crate) fn pushed_total(&self) -> u64 {
        self.pushed
    }

    /// Frames (by index) handed to a writer so far.
    pub(crate) fn taken_total(&self) -> u64 {
        self.taken_upto
    }

    /// Frames currently buffered.
    pub(crate) fn len(&self) -> usize {
        self.frames.len()
    }

    /// Frames dropped since creation.
    pub(crate) fn dropped(&self) -> u64 {
        self.dropped_total
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn frame(seq: u64) -> Arc<Frame> {
        Arc::new(Frame {
            seq,
            run_id: Arc::from("r"),
            text: format!("{PLACEHOLDER_HEAD}\"n\":{seq}}}"),
        })
    }

    fn seqs(v: &[Arc<Frame>]) -> Vec<u64> {
        v.iter().map(|f| f.seq).collect()
    }

    #[test]
    fn render_splices_seq() {
        assert_eq!(frame(7).render(), "{\"gm\":1,\"seq\":7,\"n\":7}");
    }

    #[test]
    fn detached_take_is_none() {
        let mut r = Ring::new(3);
        r.push(frame(1));
        let mut out = Vec::new();
        assert_eq!(r.take(&mut out), None);
        assert!(out.is_empty());
    }

    #[test]
    fn drop_oldest_and_gap_on_attach() {
        let mut r = Ring::new(3);
        for s in 1..=5 {
            r.push(frame(s));
        }
        assert_eq!((r.len(), r.dropped()), (3, 2));
        r.attach();
        let mut out = Vec::new();
        let gap = r
            .take(&mut out)
            .flatten()
            .map(|g| (g.count, g.from_seq, g.to_seq));
        assert_eq!(gap, Some((2, 1, 2)));
        assert_eq!(seqs(&out), vec![3, 4, 5]);
        // Live frames follow; no gap again.
        r.push(frame(6));
        out.clear();
        assert_eq!(r.take(&mut out), Some(None));
        assert_eq!(seqs(&out), vec![6]);
    }

    #[test]
    fn reattach_replays_buffer_but_reports_no_gap_for_seen_frames() {
        let mut r = Ring::new(3);
        r.attach();
        let mut out = Vec::new();
        for s in 1..=3 {
            r.push(frame(s));
        }
        r.take(&mut out);
        r.detach();
        r.push(frame(4)); // drops 1, which a viewer already saw
        r.attach();
        out.clear();
        assert_eq!(r.take(&mut out), Some(None));
        assert_eq!(seqs(&out), vec![2, 3, 4]);
    }

    #[test]
    fn lagging_writer_gets_a_gap() {
        let mut r = Ring::new(2);
        r.attach();
        for s in 1..=5 {
            r.push(frame(s));
        }
        let mut out = Vec::new();
        let gap = r
            .take(&mut out)
            .flatten()
            .map(|g| (g.count, g.from_seq, g.to_seq));
        assert_eq!(gap, Some((3, 1, 3)));
        assert_eq!(seqs(&out), vec![4, 5]);
        assert!(!r.has_pending());
    }
}
