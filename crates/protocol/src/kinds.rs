//! Closed vocabularies of the protocol: node kinds, pause points, actions, modes.

use mindgate_errors::string_enum;

string_enum!(
    /// What a node is. The extra kinds let LangChain-shaped runs and MCP servers render as themselves.
    NodeKind {
        /// A whole agent (one per run).
        Agent = "agent",
        /// A model call.
        Llm = "llm",
        /// A tool call.
        Tool = "tool",
        /// A chain of steps.
        Chain = "chain",
        /// A retriever.
        Retriever = "retriever",
        /// An MCP server.
        Server = "server",
        /// An MCP resource.
        Resource = "resource",
        /// An MCP prompt.
        Prompt = "prompt",
        /// Anything else.
        Custom = "custom",
    }
);

string_enum!(
    /// Where in a node's lifecycle a gate sits.
    PausePoint {
        /// Before the node's work starts.
        Before = "before",
        /// After the work completes, before the value returns.
        After = "after",
        /// The node threw, before the framework sees the error.
        Error = "error",
    }
);

#[allow(clippy::derivable_impls)]
impl Default for PausePoint {
    fn default() -> Self {
        PausePoint::Before
    }
}

string_enum!(
    /// How the viewer releases a held gate.
    ResumeAction {
        /// Proceed normally (at an error gate: rethrow the original error).
        Continue = "continue",
        /// Re-run the node from the top.
        Retry = "retry",
        /// Skip execution (or swallow the error) and use the supplied value.
        Inject = "inject",
        /// Cancel the run; terminal.
        Abort = "abort",
    }
);

string_enum!(
    /// Whether every node pauses (step) or only breakpoints do (run).
    RunMode {
        /// Only breakpoints and errors pause.
        Run = "run",
        /// Every node pauses before and after.
        Step = "step",
    }
);

#[allow(clippy::derivable_impls)]
impl Default for RunMode {
    fn default() -> Self {
        RunMode::Run
    }
}

string_enum!(
    /// How a run ended.
    RunStatus {
        /// Finished normally.
        Ok = "ok",
        /// Finished with an error.
        Error = "error",
        /// Aborted by the debugger or the host.
        Aborted = "aborted",
    }
);

string_enum!(
    /// How one node instance ended.
    NodeStatus {
        /// Finished normally.
        Ok = "ok",
        /// Finished with an error.
        Error = "error",
        /// Aborted.
        Aborted = "aborted",
    }
);

string_enum!(
    /// The channel of a streamed token delta.
    TokenChannel {
        /// Visible model text.
        Text = "text",
        /// Reasoning text.
        Reasoning = "reasoning",
        /// Streamed tool-call arguments.
        ToolArgs = "tool-args",
    }
);

string_enum!(
    /// Why a gate held.
    PauseReason {
        /// A breakpoint matched.
        Breakpoint = "breakpoint",
        /// The node failed and pause-on-error is armed.
        Error = "error",
        /// Step mode.
        Step = "step",
        /// The loop guard saw repeated identical calls.
        Loop = "loop",
    }
);

string_enum!(
    /// Why an app refused a resume.
    RefuseCode {
        /// The injected value does not match the node's schema.
        Schema = "schema",
        /// The injected value has the wrong shape.
        Shape = "shape",
        /// The injected value is a placeholder.
        Placeholder = "placeholder",
        /// The injected value was truncated.
        Truncated = "truncated",
        /// The action is disabled.
        Disabled = "disabled",
        /// The action is not supported.
        Unsupported = "unsupported",
    }
);
