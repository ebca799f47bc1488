//! What the binary hands the server that the server does not know: the service mounted
//! at `/mcp` ([`Mount`]) and the demo agent's launcher ([`DemoLauncher`]). Both sit below
//! the server's state, so they name its parts, never the state itself.

pub mod demo;
pub mod mount;

pub use demo::DemoLauncher;
pub use mount::{Mount, MountContext};
