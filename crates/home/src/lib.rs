//! The Mindgate home: where every Mindgate command keeps its files, and how it finds them.
//!
//! One module owns the rules the commands share, so `serve`, `mcp`, `memory` and the embedders
//! cannot drift apart:
//!
//! - [`Home`]: the home directory (`$MINDGATE_HOME`, else `~/.mindgate`, else `./.mindgate`)
//!   and the files in it — the run database `mindgate.db`, the memory store `memory.db`,
//!   imported models under `models/`, token files under `run/`, the price table `prices.toml`;
//! - [`env`]: the names of the environment variables a Mindgate process reads;
//! - [`token_file`]: `run/serve-<port>.json` (the person's control token) and
//!   `run/agent-<port>.json` (the agent token), written 0600 by `mindgate serve` and read by
//!   the local tools that talk to it;
//! - [`private_fs`]: the rule for what Mindgate writes (folders 0700, files 0600), used by
//!   the token files, the run and memory databases and the database lock;
//! - [`DEFAULT_HOST`] and [`DEFAULT_PORT`]: where the viewer server listens by default.
//!
//! ```
//! use mindgate_home::Home;
//!
//! let home = Home::at("/srv/mindgate");
//! assert_eq!(home.run_db(), std::path::Path::new("/srv/mindgate/mindgate.db"));
//! assert_eq!(home.token_file(4747), std::path::Path::new("/srv/mindgate/run/serve-4747.json"));
//! ```

pub mod env;
mod paths;
pub mod private_fs;
pub mod token_file;

pub use paths::{
    DEFAULT_FOLDER, Home, MEMORY_DB_FILE, MODELS_FOLDER, PRICES_FILE, RUN_DB_FILE, RUN_FOLDER,
};
pub use token_file::{TokenFile, TokenFileError};

use std::net::{IpAddr, Ipv4Addr};

/// The viewer server's default TCP port (the GraphMind clients' default).
pub const DEFAULT_PORT: u16 = 4747;

/// The viewer server's default bind address: loopback only.
pub const DEFAULT_HOST: IpAddr = IpAddr::V4(Ipv4Addr::LOCALHOST);
