//! Cluster glue: what the server does when several instances share one PostgreSQL
//! database (`mindgate_cluster`). The hub's side of it (gates announced and refereed
//! across instances) is `crate::hub`'s `cluster` module; here is the feed relay, which
//! turns the other instances' commits into this server's commit feed.

pub(crate) mod feed_relay;
