//! The live rules: spans of a trace become the events of one run, as they arrive.
//!
//! OpenTelemetry exports a span when it ends, so children usually arrive before their
//! parents, and a trace's spans come over several requests. The [`Tracker`] keeps, per
//! trace, the run's next `seq` and what it knows of each span:
//!
//! * **A run per trace** (`otlp-<traceId>`, `source: "otlp"`): `run.started` on its first
//!   span, named after the service until the root span names it.
//! * **Parents first within a request**: spans are ordered so that a parent sent in the
//!   same request starts before its children (`node.started` in that order, the ends in
//!   reverse), so the common case — a whole trace in one batch — gets stable node ids.
//! * **Placeholder parents**: a child whose parent span has not arrived names a
//!   placeholder node `custom:span-<parentSpanId>` (drawn `pending`); when the parent
//!   arrives it fills that same node in (kind, name, input, output) — no second node.
//! * **Pending-span twins** (`logfire.span_type = pending_span`): the span they stand for
//!   starts at once (running), under `logfire.pending_parent_id`; its end finishes it.
//! * **Duplicates** (an exporter's retry) are recognised by span id and add nothing.
//! * **Run state**: `running` until its root span ends (`run.finished` with the root's
//!   status), or until no span came for [`TrackerConfig::quiet_ms`]
//!   ([`Tracker::expire`]: `run.finished` with `reason: "quiet"`, `error` if any span
//!   failed); a root that arrives later finishes it again with its own status.

use std::collections::HashMap;
use std::sync::Arc;

use mindgate_protocol::{NodeKind, ParseResult, parse_envelope};
use mindgate_store::{MAX_ID_BYTES, MAX_NAME_BYTES, NewEvent, check_limits};
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::trace::v1::{Span, status::StatusCode};
use serde_json::{Map, Value, json};

use crate::attrs::{Attrs, str_of, to_json};
use crate::decode::hex;
use crate::export::{Incoming, Origin, TraceSpans};
use crate::mapping::{is_content_key, map_span};
pub use crate::naming::{RUN_PREFIX, SDK_NAME, THREAD_ATTRIBUTES, USER_ATTRIBUTES, run_id_of};
use crate::naming::{RunKeys, clip, placeholder_id, span_key};

/// The `source` of runs made of spans.
pub const SOURCE: &str = "otlp";

/// Default of [`TrackerConfig::quiet_ms`].
pub const DEFAULT_QUIET_MS: i64 = 60_000;

/// Default of [`TrackerConfig::max_traces`].
pub const DEFAULT_MAX_TRACES: usize = 1_024;

/// Tuning of a [`Tracker`].
#[derive(Debug, Clone, Copy)]
pub struct TrackerConfig {
    /// A run whose root has not ended and that got no span for this long is finished.
    pub quiet_ms: i64,
    /// Most traces remembered; past it the least recently active finished ones (else the
    /// least recently active) are forgotten (a span of a forgotten trace continues its run
    /// from the stored `seq`, its parents then as placeholders).
    pub max_traces: usize,
    /// The `source` of the runs made ([`SOURCE`] live; `import` for `mindgate import`,
    /// whose runs retention keeps).
    pub source: &'static str,
}

impl Default for TrackerConfig {
    fn default() -> Self {
        TrackerConfig {
            quiet_ms: DEFAULT_QUIET_MS,
            max_traces: DEFAULT_MAX_TRACES,
            source: SOURCE,
        }
    }
}

/// What became of one export request.
#[derive(Debug, Default)]
pub struct Batch {
    /// The events to store, in `seq` order per run (empty when a sink took them).
    pub events: Vec<NewEvent>,
    /// Spans mapped.
    pub accepted_spans: u64,
    /// Spans already seen (retries), skipped.
    pub duplicate_spans: u64,
    /// Spans whose events the protocol refused (counted in the partial success).
    pub rejected_spans: u64,
    /// The first reasons for the rejected ones.
    pub reasons: Vec<String>,
    /// The span (its id as a number, `0` for a run's own events) of each event emitted, in
    /// order: which spans to report when some of their events were not stored.
    pub event_spans: Vec<u64>,
}

impl Batch {
    /// Counts `n` spans as rejected for `reason` (kept among the first three reasons).
    pub fn reject(&mut self, n: u64, reason: String) {
        self.rejected_spans += n;
        if self.reasons.len() < 3 {
            self.reasons.push(reason);
        }
    }
}

/// What a trace knows of one span: its node (interned, see [`NodeIds`]), whether it
/// started and ended. Eight bytes, so a trace of 250,000 spans keeps about 4 MB of them.
#[derive(Debug, Clone, Copy)]
struct SpanEntry {
    node: u32,
    started: bool,
    ended: bool,
}

/// [`SpanEntry::node`] of a span known only as a parent: its placeholder node
/// (`custom:span-<id>`, made from the span id when asked).
const PLACEHOLDER: u32 = u32::MAX;

/// The node ids of a trace's spans, each held once (many spans share one: every
/// `chat gpt-4o` span is node `llm:gpt-4o`).
#[derive(Debug, Default)]
struct NodeIds {
    ids: Vec<Arc<str>>,
    index: HashMap<Arc<str>, u32>,
}

impl NodeIds {
    fn intern(&mut self, id: &str) -> u32 {
        if let Some(&at) = self.index.get(id) {
            return at;
        }
        let Ok(at) = u32::try_from(self.ids.len()).map(|at| at.min(PLACEHOLDER - 1)) else {
            return PLACEHOLDER;
        };
        let id: Arc<str> = Arc::from(id);
        self.ids.push(Arc::clone(&id));
        self.index.insert(id, at);
        at
    }

    /// The node id of span `span` whose entry names `node`.
    fn name(&self, node: u32, span: u64) -> String {
        match self.ids.get(node as usize) {
            Some(id) if node != PLACEHOLDER => id.to_string(),
            _ => placeholder_id(span),
        }
    }
}

/// What one trace's run is known to hold: its next `seq`, its spans and their nodes,
/// whether it finished. One per trace being received; the server locks it per trace.
#[derive(Debug)]
pub struct TraceState {
    run_id: String,
    trace: [u8; 16],
    next_seq: u64,
    spans: HashMap<u64, SpanEntry>,
    node_ids: NodeIds,
    finished: bool,
    any_error: bool,
    last_activity: i64,
    app: Arc<str>,
    source: &'static str,
    /// The conversation the trace belongs to (run meta `threadId`), once a span named it.
    thread: Option<String>,
    /// The user it ran for (run meta `userId`), once a span named one.
    user: Option<String>,
}

/// What the store already holds of a trace's run (a restarted server, a second import,
/// or what another instance wrote since): where its `seq` continues and which spans it
/// has seen, so retries add nothing.
#[derive(Debug, Default, Clone)]
pub struct StoredTrace {
    /// The highest stored `seq`.
    pub last_seq: u64,
    /// The run has a `run.finished`.
    pub finished: bool,
    /// A span failed (`node.error`).
    pub any_error: bool,
    /// Span ids with their node and whether they ended.
    spans: Vec<(u64, String, bool)>,
}

impl StoredTrace {
    /// Reads a run's stored events (`type`, payload), in `seq` order.
    pub fn from_events<'a>(events: impl IntoIterator<Item = (u64, &'a str, Value)>) -> StoredTrace {
        let mut stored = StoredTrace::default();
        let mut index: HashMap<u64, usize> = HashMap::new();
        for (seq, type_name, payload) in events {
            stored.last_seq = stored.last_seq.max(seq);
            let ended = match type_name {
                "node.started" => false,
                "node.finished" => true,
                "node.error" => {
                    stored.any_error = true;
                    continue;
                }
                "run.finished" => {
                    stored.finished = true;
                    continue;
                }
                _ => continue,
            };
            let Some(span) = payload
                .get("instanceId")
                .and_then(Value::as_str)
                .and_then(parse_hex8)
                .map(u64::from_be_bytes)
            else {
                continue;
            };
            let node = payload
                .get("nodeId")
                .and_then(Value::as_str)
                .unwrap_or_default();
            match index.get(&span) {
                Some(&i) => stored.spans[i].2 |= ended,
                None => {
                    index.insert(span, stored.spans.len());
                    stored.spans.push((span, node.to_owned(), ended));
                }
            }
        }
        stored
    }

    /// Whether it holds no event.
    pub fn is_empty(&self) -> bool {
        self.last_seq == 0
    }
}

fn nanos_to_ms(n: u64) -> i64 {
    i64::try_from(n / 1_000_000).unwrap_or(i64::MAX)
}

/// Where emitted events go: the batch's list, or a caller's sink (the server's writer).
pub type EventSink<'a> = Option<&'a mut dyn FnMut(NewEvent)>;

impl TraceState {
    /// A trace nothing is known of yet (call [`TraceState::absorb`] with what the store
    /// holds before mapping spans).
    pub fn new(trace: [u8; 16], app: Arc<str>, source: &'static str, now: i64) -> TraceState {
        TraceState {
            run_id: run_id_of(&trace),
            trace,
            next_seq: 1,
            spans: HashMap::new(),
            node_ids: NodeIds::default(),
            finished: false,
            any_error: false,
            last_activity: now,
            app,
            source,
            thread: None,
            user: None,
        }
    }

    /// Notes the thread and user the spans (else their resources) name, first found wins.
    /// Only the spans whose attributes name one are decoded (the walk marked them).
    fn note_keys(&mut self, group: &TraceSpans) {
        for span in &group.spans {
            if self.thread.is_some() && self.user.is_some() {
                return;
            }
            let keys = if span.names_keys {
                group
                    .decode(span)
                    .map(|incoming| RunKeys::of(&incoming.attrs))
                    .unwrap_or_default()
            } else {
                RunKeys::default()
            };
            let resource_keys = group.origin(span).resource_keys;
            if self.thread.is_none() {
                self.thread = keys.thread.or_else(|| resource_keys.thread.clone());
            }
            if self.user.is_none() {
                self.user = keys.user.or_else(|| resource_keys.user.clone());
            }
        }
    }

    /// The run's `run.started` meta: its name, source and trace, and the thread and user
    /// its spans named.
    fn run_meta(&self, name: &str) -> Value {
        let mut meta = json!({"name": name, "source": SOURCE, "traceId": hex(&self.trace)});
        if let Some(thread) = &self.thread {
            meta["threadId"] = Value::String(thread.clone());
        }
        if let Some(user) = &self.user {
            meta["userId"] = Value::String(user.clone());
        }
        meta
    }

    /// The run id.
    pub fn run_id(&self) -> &str {
        &self.run_id
    }

    /// The trace id.
    pub fn trace(&self) -> [u8; 16] {
        self.trace
    }

    /// The `seq` the next event takes.
    pub fn next_seq(&self) -> u64 {
        self.next_seq
    }

    /// When a span of the trace last came (epoch ms).
    pub fn last_activity(&self) -> i64 {
        self.last_activity
    }

    /// Whether the run has finished.
    pub fn is_finished(&self) -> bool {
        self.finished
    }

    /// Takes in what the store holds beyond what this state knows (a first read, or the
    /// events another instance wrote since): the `seq` continues after it, its spans are
    /// known (retries add nothing; a placeholder another instance started is reused).
    /// Events written by others count as activity at `now`.
    pub fn absorb(&mut self, stored: StoredTrace, now: i64) {
        if stored.last_seq >= self.next_seq {
            self.next_seq = stored.last_seq.saturating_add(1);
            self.last_activity = self.last_activity.max(now);
        }
        for (id, node, ended) in stored.spans {
            let node = self.node_ids.intern(&node);
            let entry = self.spans.entry(id).or_insert(SpanEntry {
                node,
                started: false,
                ended: false,
            });
            if !entry.started {
                entry.node = node;
                entry.started = true;
            }
            entry.ended |= ended;
        }
        self.finished |= stored.finished;
        self.any_error |= stored.any_error;
    }

    /// Maps one request's spans of this trace to events (`seq`s allocated from
    /// [`TraceState::next_seq`]), into `sink` or else `batch.events`. Each span is decoded
    /// when its events are built and dropped after (twice: for its start, for its end).
    pub fn ingest(&mut self, group: TraceSpans, now: i64, batch: &mut Batch, sink: EventSink<'_>) {
        if group.is_empty() {
            return;
        }
        let Origin { app, sdk, .. } = group.first_origin();
        self.last_activity = now;
        self.note_keys(&group);
        self.spans.reserve(group.len());
        let mut out = Emitter {
            run: self,
            batch,
            sink,
            rejected_before: 0,
            span: 0,
        };
        if out.run.next_seq == 1 {
            let meta = out.run.run_meta(&app);
            out.emit(
                nanos_to_ms(group.earliest_ns()),
                "run.started",
                json!({"app": &*app, "sdk": {"name": sdk.0, "version": sdk.1}, "meta": meta}),
            );
        }
        // Starts, parents first; then ends, children first (by index: nothing is moved).
        let order = {
            let ids: Vec<u64> = group.spans.iter().map(|s| s.id).collect();
            let parents: Vec<u64> = group.spans.iter().map(|s| s.parent).collect();
            crate::order::parents_first(&ids, &parents)
        };
        let mut ends: Vec<u32> = Vec::with_capacity(group.len());
        for index in order {
            let Some(span) = group.spans.get(index as usize) else {
                continue;
            };
            out.rejected_before = out.batch.rejected_spans;
            out.span = span.id;
            let incoming = match group.decode(span) {
                Ok(incoming) => incoming,
                Err(reason) => {
                    out.refuse(reason);
                    continue;
                }
            };
            if str_of(&incoming.attrs, "logfire.span_type") == Some("pending_span") {
                out.pending(&incoming);
                continue;
            }
            if out.start(&incoming) {
                ends.push(index);
            }
        }
        for index in ends.into_iter().rev() {
            let Some(span) = group.spans.get(index as usize) else {
                continue;
            };
            out.rejected_before = out.batch.rejected_spans;
            out.span = span.id;
            match group.decode(span) {
                Ok(incoming) => out.end(&incoming),
                Err(reason) => out.refuse(reason),
            }
        }
    }

    /// Finishes the run if no span came for `quiet_ms` and its root has not ended:
    /// `run.finished` with `reason: "quiet"`. `true` when it did.
    pub fn expire(
        &mut self,
        now: i64,
        quiet_ms: i64,
        batch: &mut Batch,
        sink: EventSink<'_>,
    ) -> bool {
        if self.finished || now.saturating_sub(self.last_activity) < quiet_ms {
            return false;
        }
        let status = if self.any_error { "error" } else { "ok" };
        let mut out = Emitter {
            run: self,
            batch,
            sink,
            rejected_before: 0,
            span: 0,
        };
        out.emit(
            now,
            "run.finished",
            json!({"status": status, "reason": "quiet"}),
        );
        out.run.finished = true;
        true
    }
}

/// The live state of every trace being received, for one sequential caller
/// (`mindgate import`); the server keeps one [`TraceState`] per trace under its own lock.
#[derive(Debug, Default)]
pub struct Tracker {
    config: TrackerConfig,
    traces: HashMap<[u8; 16], TraceState>,
}

impl Tracker {
    /// A tracker with `config`.
    pub fn new(config: TrackerConfig) -> Tracker {
        Tracker {
            config,
            traces: HashMap::new(),
        }
    }

    /// Traces remembered.
    pub fn trace_count(&self) -> usize {
        self.traces.len()
    }

    /// Maps a decoded export to events. `now` is the wall clock (epoch ms, for the quiet
    /// timeout); `stored` answers, for a run this tracker does not know yet, what the store
    /// holds of it (so a restarted server or a second import continues the run and skips
    /// the spans it has).
    pub fn ingest(
        &mut self,
        request: &ExportTraceServiceRequest,
        now: i64,
        stored: &mut dyn FnMut(&str) -> Option<StoredTrace>,
    ) -> Batch {
        let mut batch = Batch::default();
        let source = self.config.source;
        let export = match crate::export::read_request(request) {
            Ok(export) => export,
            Err(e) => {
                let spans = request
                    .resource_spans
                    .iter()
                    .flat_map(|rs| &rs.scope_spans)
                    .map(|ss| ss.spans.len() as u64)
                    .sum();
                batch.reject(spans, e.to_string());
                return batch;
            }
        };
        for reason in export.reasons {
            batch.reject(0, reason);
        }
        batch.rejected_spans += export.rejected_spans;
        for group in export.traces {
            let state = self.traces.entry(group.trace()).or_insert_with(|| {
                let mut state = TraceState::new(group.trace(), group.app(), source, now);
                if let Some(s) = stored(&group.run_id()) {
                    state.absorb(s, now);
                }
                state
            });
            state.ingest(group, now, &mut batch, None);
        }
        self.evict();
        batch
    }

    /// Finishes the runs that got no span for [`TrackerConfig::quiet_ms`] and whose root
    /// has not ended: `run.finished` with `reason: "quiet"`.
    pub fn expire(&mut self, now: i64) -> Vec<NewEvent> {
        let mut batch = Batch::default();
        for state in self.traces.values_mut() {
            state.expire(now, self.config.quiet_ms, &mut batch, None);
        }
        batch.events
    }

    fn evict(&mut self) {
        let max = self.config.max_traces.max(1);
        if self.traces.len() <= max {
            return;
        }
        let mut by_age: Vec<(bool, i64, [u8; 16])> = self
            .traces
            .iter()
            .map(|(k, r)| (!r.finished, r.last_activity, *k))
            .collect();
        by_age.sort_unstable();
        let excess = self.traces.len() - max;
        for (_, _, key) in by_age.into_iter().take(excess) {
            self.traces.remove(&key);
        }
    }
}

/// Appends one run's events, allocating `seq`s.
struct Emitter<'a, 's> {
    run: &'a mut TraceState,
    batch: &'a mut Batch,
    sink: EventSink<'s>,
    rejected_before: u64,
    /// The span whose events are being emitted (`0`: the run's own).
    span: u64,
}

impl Emitter<'_, '_> {
    /// Builds one event through the protocol parser (the one validation of a frame) and
    /// the ingest limits; `false` when they refuse it.
    fn emit(&mut self, ts: i64, type_name: &str, payload: Value) -> bool {
        let frame = json!({
            "gm": mindgate_protocol::PROTOCOL_VERSION,
            "seq": self.run.next_seq,
            "ts": ts,
            "runId": self.run.run_id,
            "type": type_name,
            "payload": payload,
        })
        .to_string();
        let parsed = parse_envelope(&frame);
        let refusal = match &parsed {
            ParseResult::Invalid { reason, .. } => Some(reason.to_string()),
            _ => check_limits(&parsed).err().map(|r| r.message()),
        };
        if let Some(reason) = refusal {
            self.refuse(format!("{type_name}: {reason}"));
            return false;
        }
        let Some(event) = NewEvent::from_frame(&frame, &parsed) else {
            self.refuse(format!("{type_name}: not a run event"));
            return false;
        };
        self.run.next_seq += 1;
        let event = event
            .with_app_hint(Some(Arc::clone(&self.run.app)))
            .with_source(self.run.source);
        self.batch.event_spans.push(self.span);
        match self.sink.as_mut() {
            Some(sink) => sink(event),
            None => self.batch.events.push(event),
        }
        true
    }

    fn refuse(&mut self, reason: String) {
        // One span counts once, however many of its events were refused.
        if self.batch.rejected_spans == self.rejected_before {
            self.batch.rejected_spans += 1;
            if self.batch.reasons.len() < 3 {
                self.batch.reasons.push(reason);
            }
        }
    }

    /// The node id of a parent span: its known node, else a new placeholder.
    fn parent_node(&mut self, parent: &[u8]) -> Option<String> {
        if parent.is_empty() {
            return None;
        }
        let key = span_key(parent);
        let entry = self.run.spans.entry(key).or_insert(SpanEntry {
            node: PLACEHOLDER,
            started: false,
            ended: false,
        });
        Some(self.run.node_ids.name(entry.node, key))
    }

    fn started_payload(
        &mut self,
        incoming: &Incoming,
        span_id: &[u8],
        parent: &[u8],
        node_id: &str,
    ) -> Value {
        let node = map_span(&incoming.span.name, &incoming.attrs);
        let parent_id = self.parent_node(parent);
        let attributes: Map<String, Value> = incoming
            .attrs
            .iter()
            .filter(|(k, _)| !is_content_key(k))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let mut payload = json!({
            "nodeId": node_id,
            "kind": node.kind.as_str(),
            "name": clip(&node.name, MAX_NAME_BYTES),
            "instanceId": hex(span_id),
            "otel": {
                "traceId": hex(&incoming.span.trace_id),
                "spanId": hex(span_id),
                "spanName": incoming.span.name,
                "scope": &*incoming.origin.scope,
                "attributes": attributes,
            },
        });
        if let Some(p) = parent_id {
            payload["parentId"] = Value::String(p);
            payload["otel"]["parentSpanId"] = Value::String(hex(parent));
        }
        if let Some(input) = node.input {
            payload["input"] = input;
        }
        if let Some(model) = node.model {
            payload["model"] = Value::String(model);
        }
        payload
    }

    /// A pending-span twin: its real span starts now (unless known already).
    fn pending(&mut self, incoming: &Incoming) {
        let real = incoming.span.parent_span_id.clone();
        if real.len() != 8 {
            return;
        }
        let key = span_key(&real);
        if self
            .run
            .spans
            .get(&key)
            .is_some_and(|e| e.started || e.ended)
        {
            return;
        }
        let real_parent = str_of(&incoming.attrs, "logfire.pending_parent_id")
            .and_then(parse_hex8)
            .filter(|p| p.iter().any(|b| *b != 0))
            .map(|p| p.to_vec())
            .unwrap_or_default();
        let node_id = self.node_id_for(key, incoming);
        let payload = self.started_payload(incoming, &real, &real_parent, &node_id);
        let ts = nanos_to_ms(incoming.span.start_time_unix_nano);
        if self.emit(ts, "node.started", payload) {
            self.batch.accepted_spans += 1;
            let entry = self.entry(key, node_id);
            entry.started = true;
        }
    }

    /// The node id a span takes: its placeholder's or pending start's if it had one, else
    /// the mapping's.
    fn node_id_for(&self, key: u64, incoming: &Incoming) -> String {
        match self.run.spans.get(&key) {
            Some(e) => self.run.node_ids.name(e.node, key),
            None => clip(
                &map_span(&incoming.span.name, &incoming.attrs).node_id,
                MAX_ID_BYTES,
            ),
        }
    }

    fn entry(&mut self, key: u64, node_id: String) -> &mut SpanEntry {
        let node = self.run.node_ids.intern(&node_id);
        self.run.spans.entry(key).or_insert(SpanEntry {
            node,
            started: false,
            ended: false,
        })
    }

    /// Emits a span's `node.started`; `false` for a duplicate (or a refused one).
    fn start(&mut self, incoming: &Incoming) -> bool {
        let span = &incoming.span;
        let key = span_key(&span.span_id);
        if self.run.spans.get(&key).is_some_and(|e| e.ended) {
            self.batch.duplicate_spans += 1;
            return false;
        }
        let node_id = self.node_id_for(key, incoming);
        // A span that names itself as its parent has none (its node is its own).
        let parent: &[u8] = if span.parent_span_id == span.span_id {
            &[]
        } else {
            &span.parent_span_id
        };
        let payload = self.started_payload(incoming, &span.span_id, parent, &node_id);
        if !self.emit(
            nanos_to_ms(span.start_time_unix_nano),
            "node.started",
            payload,
        ) {
            return false;
        }
        self.entry(key, node_id).started = true;
        true
    }

    /// Emits a span's end: `node.error` when it failed, then `node.finished`; a root span
    /// also finishes the run.
    fn end(&mut self, incoming: &Incoming) {
        let span = &incoming.span;
        let key = span_key(&span.span_id);
        let Some(node_id) = self
            .run
            .spans
            .get(&key)
            .map(|e| self.run.node_ids.name(e.node, key))
        else {
            return;
        };
        let node = map_span(&span.name, &incoming.attrs);
        let instance = hex(&span.span_id);
        let end_ms = nanos_to_ms(span.end_time_unix_nano.max(span.start_time_unix_nano));
        let duration_ms = span
            .end_time_unix_nano
            .saturating_sub(span.start_time_unix_nano) as f64
            / 1e6;
        let failed = span
            .status
            .as_ref()
            .is_some_and(|s| s.code == StatusCode::Error as i32);
        if failed {
            self.run.any_error = true;
            let error = error_of(span, &incoming.attrs);
            self.emit(
                end_ms,
                "node.error",
                json!({"nodeId": node_id, "instanceId": instance, "error": error}),
            );
        }
        let mut payload = json!({
            "nodeId": node_id,
            "instanceId": instance,
            "durationMs": duration_ms,
            "status": if failed { "error" } else { "ok" },
        });
        if let Some(output) = node.output {
            payload["output"] = output;
        }
        if let Some(usage) = node.usage {
            payload["usage"] = usage;
        }
        if let Some(model) = node.response_model.or(node.model) {
            payload["model"] = Value::String(model);
        }
        if self.emit(end_ms, "node.finished", payload) {
            self.batch.accepted_spans += 1;
            if let Some(e) = self.run.spans.get_mut(&key) {
                e.ended = true;
            }
        }
        if span.parent_span_id.is_empty() {
            self.run.finished = true;
            let name = if node.kind == NodeKind::Custom {
                span.name.clone()
            } else {
                node.name
            };
            let app = Arc::clone(&self.run.app);
            let meta = self.run.run_meta(&clip(&name, MAX_NAME_BYTES));
            self.emit(
                end_ms,
                "run.started",
                json!({"app": &*app, "sdk": {"name": incoming.origin.sdk.0, "version": incoming.origin.sdk.1},
                       "meta": meta}),
            );
            let mut finished = json!({"status": if failed { "error" } else { "ok" }});
            if failed {
                finished["error"] = error_of(span, &incoming.attrs);
            }
            self.emit(end_ms, "run.finished", finished);
        }
    }
}

fn parse_hex8(s: &str) -> Option<[u8; 8]> {
    let s = s.trim();
    if s.len() != 16 {
        return None;
    }
    let mut out = [0u8; 8];
    for (i, slot) in out.iter_mut().enumerate() {
        *slot = u8::from_str_radix(s.get(i * 2..i * 2 + 2)?, 16).ok()?;
    }
    Some(out)
}

/// The error of a failed span: `error.type` or the exception event's type, its message,
/// its stack trace.
fn error_of(span: &Span, attrs: &Attrs) -> Value {
    let exception = span
        .events
        .iter()
        .find(|e| e.name == "exception")
        .map(|e| to_json(&e.attributes))
        .unwrap_or_default();
    let name = str_of(attrs, "error.type")
        .or_else(|| str_of(&exception, "exception.type"))
        .unwrap_or("Error");
    let status_message = span
        .status
        .as_ref()
        .map(|s| s.message.as_str())
        .unwrap_or("");
    let message = if status_message.trim().is_empty() {
        str_of(&exception, "exception.message").unwrap_or(name)
    } else {
        status_message
    };
    let mut error = json!({"name": clip(name, MAX_NAME_BYTES), "message": message});
    if let Some(stack) = str_of(&exception, "exception.stacktrace") {
        error["stack"] = Value::String(stack.to_owned());
    }
    error
}
