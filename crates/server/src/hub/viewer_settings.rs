//! The viewer's persisted settings, `<home>/viewer-settings.json`: whether gates held
//! only by pause on error are kept with nobody watching (the viewer's "hold when nobody
//! watches" toggle). A missing or unreadable file means the defaults.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The file's name under the home.
pub const VIEWER_SETTINGS_FILE: &str = "viewer-settings.json";

/// The persisted settings.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ViewerSettings {
    /// Keep default (pause-on-error) gates held with nobody watching.
    #[serde(default)]
    pub hold_unwatched: bool,
}

fn path(home: &Path) -> PathBuf {
    home.join(VIEWER_SETTINGS_FILE)
}

/// The settings under `home` (the defaults when there are none or they do not read).
pub(crate) fn load(home: &Path) -> ViewerSettings {
    let Ok(text) = std::fs::read_to_string(path(home)) else {
        return ViewerSettings::default();
    };
    serde_json::from_str(&text).unwrap_or_else(|e| {
        tracing::warn!(file = %path(home).display(), error = %e, "unreadable viewer settings; using the defaults");
        ViewerSettings::default()
    })
}

/// Writes the settings under `home` (a private file, replaced whole).
pub(crate) fn save(home: &Path, settings: ViewerSettings) -> std::io::Result<()> {
    let target = path(home);
    mindgate_home::private_fs::create_private_parent(&target)?;
    let tmp = target.with_extension("json.tmp");
    let mut file = mindgate_home::private_fs::private_file_options()
        .write(true)
        .create(true)
        .truncate(true)
        .open(&tmp)?;
    file.write_all(serde_json::to_string(&settings)?.as_bytes())?;
    file.sync_all()?;
    std::fs::rename(&tmp, &target)
}

/// Sets the viewer's toggle: the hub keeps (or stops keeping) default gates held with
/// nobody watching, and the choice is saved for the next start.
pub(crate) fn set_hold_unwatched(hub: &super::Hub, home: &Path, hold: bool) {
    hub.set_hold_unwatched(hold);
    let saved = save(
        home,
        ViewerSettings {
            hold_unwatched: hold,
        },
    );
    if let Err(e) = saved {
        tracing::warn!(error = %e, "could not save the viewer settings");
    }
}
