//! `mindgate memory embedder import|status`.

use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::Context;
use mindgate_embed::{EmbedderKind, ImportedModel, import_model, imported_models, models_dir};
use mindgate_home::Home;
use serde_json::json;

use super::embedders;
use crate::args::{EmbedderArgs, EmbedderCommand, EmbedderStatusArgs};

/// Runs a `mindgate memory embedder` subcommand.
pub fn run(args: EmbedderArgs) -> anyhow::Result<ExitCode> {
    match args.command {
        EmbedderCommand::Import { source } => import(&source),
        EmbedderCommand::Status(args) => status(&args),
    }
}

fn import(source: &Path) -> anyhow::Result<ExitCode> {
    let home = Home::from_env();
    let started = Instant::now();
    let report = import_model(source, home.root())
        .with_context(|| format!("cannot import {}", source.display()))?;
    let manifest = &report.manifest;
    println!(
        "imported {} ({}-d, sha256 {}) into {}{} in {:.1} s",
        manifest.name,
        manifest.dimension,
        manifest.weights_sha256,
        report.dir.display(),
        if report.replaced {
            ", replacing the earlier import"
        } else {
            ""
        },
        started.elapsed().as_secs_f64()
    );
    println!(
        "it is the active embedder unless --embedder, MINDGATE_EMBEDDER or MINDGATE_EMBED_URL \
         say otherwise (see `mindgate memory embedder status`)"
    );
    Ok(ExitCode::SUCCESS)
}

fn status(args: &EmbedderStatusArgs) -> anyhow::Result<ExitCode> {
    let requested = args
        .embedder
        .as_deref()
        .map(str::parse::<EmbedderKind>)
        .transpose()?;
    let config = embedders::config(requested, args.model_dir.clone())?;
    let models = models_dir(&config.home);
    let imported = imported_models(&config.home);
    let started = Instant::now();
    // The selection (if one could be made) and the loaded embedder or why it failed.
    let (selection, loaded) = match mindgate_embed::plan(&config) {
        Ok(selection) => {
            let loaded = mindgate_embed::load(&selection, &config).map_err(|e| e.to_string());
            (Some(selection), loaded)
        }
        Err(err) => (None, Err(err.to_string())),
    };
    let load_ms = started.elapsed().as_secs_f64() * 1e3;

    if args.json {
        let mut active = json!({
            "kind": selection.as_ref().map(|s| s.kind.name()),
            "reason": selection.as_ref().map(|s| s.reason.clone()),
            "modelDir": selection.as_ref().and_then(|s| s.model_dir.clone()),
        });
        match &loaded {
            Ok(embedder) => {
                let id = embedder.id();
                active["id"] = json!(id.to_string());
                active["provider"] = json!(id.provider);
                active["model"] = json!(id.model);
                active["dimension"] = json!(id.dimension);
                active["loadMs"] = json!(load_ms);
            }
            Err(err) => active["error"] = json!(err),
        }
        let body = json!({
            "active": active,
            "modelsDir": models,
            "imported": imported.iter().map(imported_json).collect::<Vec<_>>(),
        });
        println!("{}", serde_json::to_string_pretty(&body)?);
    } else {
        match (&selection, &loaded) {
            (_, Ok(embedder)) => println!("active embedder: {}", embedder.id()),
            (Some(s), Err(err)) => println!("active embedder: {} (cannot load it: {err})", s.kind),
            (None, Err(err)) => println!("active embedder: none ({err})"),
        }
        if let Some(s) = &selection {
            println!("  why: {}", s.reason);
            if let Some(dir) = &s.model_dir {
                println!("  model: {}", dir.display());
            }
        }
        if loaded.is_ok() {
            println!("  loaded in {load_ms:.0} ms");
        }
        if imported.is_empty() {
            println!("imported models ({}): none", models.display());
        } else {
            println!("imported models ({}):", models.display());
            for model in &imported {
                println!(
                    "  {}  {}-d  sha256 {}  from {}",
                    model.manifest.name,
                    model.manifest.dimension,
                    model.manifest.weights_sha256,
                    model.manifest.source
                );
            }
        }
    }
    Ok(if loaded.is_ok() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

fn imported_json(model: &ImportedModel) -> serde_json::Value {
    json!({
        "name": model.manifest.name,
        "dir": model.dir,
        "dimension": model.manifest.dimension,
        "weightsSha256": model.manifest.weights_sha256,
        "source": model.manifest.source,
    })
}
