//! The lines of a v0 DSH `session.jsonl.zstd` read on two threads.
//!
//! Decoding a frame and reading its lines is most of `mindgate taskgraph`'s time on a large
//! session, and the lines do not depend on each other until the reader's state is applied
//! (times carried over, the header, the fork marker). So the calling thread decodes the
//! frames and cuts them into chunks of whole lines; each chunk is read (for DSH the typed
//! fast path, else the line's JSON object) either by one worker thread or, when the worker
//! already has work waiting, by the calling thread itself; the results are applied to the
//! [`SplitReader`] strictly in file order. One core: everything on the calling thread.

use std::collections::VecDeque;
use std::sync::mpsc::{self, Receiver};

/// A line reader whose lines can be read apart, on any thread, and then applied in file
/// order (the DSH reader: the typed fast path, else the line's JSON object, is the part
/// without state).
pub(super) trait SplitReader {
    /// One line as read without the reader's state.
    type Line: Send;

    /// Reads the whole line `raw`, the `line`th (1-based) of `file`, without the reader's
    /// state (a line in a chunk: never the file's possibly torn end).
    fn read(file: &str, line: u64, raw: &[u8]) -> Self::Line;

    /// Applies the next line, in file order.
    fn apply(&mut self, line: Self::Line);

    /// Counts `n` lines as read (their lines having been applied one by one).
    fn skip_lines(&mut self, n: u64);

    /// A chunk's lines have all been applied (a place to hand on what they made).
    fn chunk_applied(&mut self) {}
}

/// How many chunks may wait for the worker before the calling thread reads one itself.
/// The calling thread has work of its own (decoding, applying, and the task graph's build
/// when one is fed while reading), so it should read a chunk only when the worker is well
/// behind: with 2, the worker sat idle while the calling thread built what it had read
/// (the reference session: 27 % of the CPU on the worker, `load_tree` 0.24–0.37 s); with 8
/// (≈ 1.4 MB of decoded lines waiting at most) 0.21–0.28 s.
const WORKER_BACKLOG: usize = 8;

/// Feeds the whole lines of the decoded pieces `frames` hands over (in file order) through
/// `reader`, on two threads when the machine has two cores; returns `frames`' error, else
/// the bytes after the last newline (a possibly torn last line) for the caller to read as the
/// file's end.
pub(super) fn read_frames<R: SplitReader, E>(
    file: &str,
    reader: &mut R,
    frames: impl FnOnce(&mut dyn FnMut(Vec<u8>)) -> Result<(), E>,
) -> Result<Vec<u8>, E> {
    let two_cores = std::thread::available_parallelism().is_ok_and(|n| n.get() > 1);
    if two_cores {
        return on_two_threads(file, reader, frames);
    }
    let mut chunks = Chunker::default();
    let mut lines_before = 0;
    frames(&mut |piece| {
        if let Some(chunk) = chunks.push(piece) {
            for line in read_chunk::<R>(file, lines_before, &chunk) {
                reader.apply(line);
            }
            reader.chunk_applied();
            lines_before += newlines(&chunk);
        }
    })?;
    reader.skip_lines(lines_before);
    Ok(chunks.carry)
}

/// [`read_frames`] with a worker thread.
fn on_two_threads<R: SplitReader, E>(
    file: &str,
    reader: &mut R,
    frames: impl FnOnce(&mut dyn FnMut(Vec<u8>)) -> Result<(), E>,
) -> Result<Vec<u8>, E> {
    std::thread::scope(|scope| {
        let (work_tx, work_rx) = mpsc::sync_channel::<(u64, Vec<u8>)>(WORKER_BACKLOG);
        let (done_tx, done_rx) = mpsc::channel::<Vec<R::Line>>();
        let spawned = std::thread::Builder::new()
            .name("dsh-lines".into())
            .spawn_scoped(scope, move || {
                for (lines_before, chunk) in work_rx {
                    if done_tx
                        .send(read_chunk::<R>(file, lines_before, &chunk))
                        .is_err()
                    {
                        break;
                    }
                }
            });
        // Without a worker (the thread could not start) every chunk is read here.
        let worker = spawned.is_ok().then_some(work_tx);
        // Chunks in file order: read (`Some`) or still at the worker (`None`).
        let mut queue: VecDeque<Option<Vec<R::Line>>> = VecDeque::new();
        let mut chunks = Chunker::default();
        let mut lines_before = 0u64;
        let decoded = frames(&mut |piece| {
            let Some(chunk) = chunks.push(piece) else {
                return;
            };
            let first = lines_before;
            lines_before += newlines(&chunk);
            let at_worker = queue.iter().filter(|c| c.is_none()).count();
            let read_here = match &worker {
                Some(tx) if at_worker < WORKER_BACKLOG => match tx.send((first, chunk)) {
                    Ok(()) => None,
                    Err(mpsc::SendError((first, chunk))) => {
                        Some(read_chunk::<R>(file, first, &chunk))
                    }
                },
                _ => Some(read_chunk::<R>(file, first, &chunk)),
            };
            queue.push_back(read_here);
            apply_ready(&mut queue, &done_rx, reader, false);
        });
        // Closing the channel ends the worker's loop once it has read what it was sent.
        drop(worker);
        apply_ready(&mut queue, &done_rx, reader, true);
        reader.skip_lines(lines_before);
        decoded.map(|()| chunks.carry)
    })
}

/// Applies the read chunks at the front of `queue` to `reader`, taking the worker's results
/// as they come (waiting for them when `wait`, else only those already there).
fn apply_ready<R: SplitReader>(
    queue: &mut VecDeque<Option<Vec<R::Line>>>,
    done: &Receiver<Vec<R::Line>>,
    reader: &mut R,
    wait: bool,
) {
    while let Some(front) = queue.front_mut() {
        let lines = match front.take() {
            Some(lines) => lines,
            None => {
                let got = if wait {
                    done.recv().ok()
                } else {
                    done.try_recv().ok()
                };
                // Nothing yet (or, waiting, a worker that died: the scope reports its panic).
                let Some(lines) = got else {
                    break;
                };
                lines
            }
        };
        queue.pop_front();
        for line in lines {
            reader.apply(line);
        }
        reader.chunk_applied();
    }
}

/// Reads the whole lines of `chunk`, numbered after `lines_before`.
fn read_chunk<R: SplitReader>(file: &str, lines_before: u64, chunk: &[u8]) -> Vec<R::Line> {
    let mut out = Vec::with_capacity(chunk.len() / 256);
    super::for_each_line(chunk, |line, raw, _| {
        out.push(R::read(file, lines_before + line, raw));
    });
    out
}

/// How many lines `bytes` ends (its newlines).
pub(super) fn newlines(bytes: &[u8]) -> u64 {
    memchr::memchr_iter(b'\n', bytes).count() as u64
}

/// Cuts decoded pieces into chunks of whole lines, carrying a piece's unfinished last line
/// over to the next.
#[derive(Default)]
struct Chunker {
    carry: Vec<u8>,
}

impl Chunker {
    /// The whole lines `piece` completes (with the carried start of its first line), or
    /// `None` when it finishes no line.
    fn push(&mut self, mut piece: Vec<u8>) -> Option<Vec<u8>> {
        let Some(last_newline) = memchr::memrchr(b'\n', &piece) else {
            self.carry.extend_from_slice(&piece);
            return None;
        };
        let tail = piece.split_off(last_newline + 1);
        let chunk = if self.carry.is_empty() {
            piece
        } else {
            let mut chunk = std::mem::take(&mut self.carry);
            chunk.extend_from_slice(&piece);
            chunk
        };
        self.carry = tail;
        Some(chunk)
    }
}
