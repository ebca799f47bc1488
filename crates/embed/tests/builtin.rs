//! The builtin hashed n-gram embedder: identity, shape, determinism, folding and a small
//! retrieval check on a fixture of our own.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use mindgate_embed::{BuiltinEmbedder, Embedder, cosine};

fn norm(v: &[f32]) -> f32 {
    v.iter().map(|x| x * x).sum::<f32>().sqrt()
}

#[test]
fn id_names_the_algorithm_version_and_dimension() {
    let embedder = BuiltinEmbedder::new();
    assert_eq!(embedder.id().to_string(), "builtin:ngram-v1@512");
    assert_eq!(embedder.dimension(), 512);
    let small = BuiltinEmbedder::with_dimension(64).unwrap();
    assert_eq!(small.id().to_string(), "builtin:ngram-v1@64");
    assert_eq!(small.embed_one("hello world").unwrap().len(), 64);
    assert!(BuiltinEmbedder::with_dimension(0).is_err());
}

#[test]
fn vectors_have_unit_length_or_are_zero_when_there_is_no_word() {
    let embedder = BuiltinEmbedder::new();
    let texts = [
        "Caroline went to the LGBTQ support group yesterday.",
        "x",
        "Тбилиси — столица Грузии",
        "東京は日本の首都です",
        "a b c 1 2 3",
    ];
    for (text, v) in texts.iter().zip(embedder.embed(&texts).unwrap()) {
        assert_eq!(v.len(), 512);
        assert!(
            (norm(&v) - 1.0).abs() < 1e-5,
            "{text:?} has norm {}",
            norm(&v)
        );
    }
    for empty in ["", "   ", "?!… -- ..."] {
        let v = embedder.embed_one(empty).unwrap();
        assert_eq!(v.len(), 512);
        assert!(
            v.iter().all(|x| *x == 0.0),
            "{empty:?} should embed to zeros"
        );
    }
}

#[test]
fn same_text_same_vector_and_batch_equals_single() {
    let embedder = BuiltinEmbedder::new();
    let texts = [
        "the cat sat on the mat",
        "a dog barked twice at midnight",
        "",
    ];
    let batch = embedder.embed(&texts).unwrap();
    for (text, from_batch) in texts.iter().zip(&batch) {
        assert_eq!(&embedder.embed_one(text).unwrap(), from_batch);
        assert_eq!(&BuiltinEmbedder::new().embed_one(text).unwrap(), from_batch);
    }
}

/// The vector of a fixed text, quantised and hashed. If this fails you changed the
/// algorithm: bump `BUILTIN_MODEL` (stored vectors are filed under the id) and update it.
#[test]
fn algorithm_is_pinned_to_its_version() {
    let v = BuiltinEmbedder::new()
        .embed_one("Melanie painted a sunrise over the lake in 2022!")
        .unwrap();
    let nonzero = v.iter().filter(|x| **x != 0.0).count();
    let quantised: Vec<i32> = v.iter().map(|x| (x * 1000.0).round() as i32).collect();
    let digest = quantised.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, q| {
        (h ^ (*q as u32 as u64)).wrapping_mul(0x0100_0000_01b3)
    });
    assert_eq!(
        (nonzero, digest),
        (72, 10_558_298_835_200_623_225),
        "builtin vectors changed: bump BUILTIN_MODEL and update this pin"
    );
}

#[test]
fn case_width_and_compatibility_forms_fold_together() {
    let embedder = BuiltinEmbedder::new();
    let plain = embedder.embed_one("tbilisi office").unwrap();
    for variant in [
        "TBILISI Office",
        "Ｔｂｉｌｉｓｉ　ｏｆｆｉｃｅ",
        "tbilisi, office.",
    ] {
        let v = embedder.embed_one(variant).unwrap();
        assert!(cosine(&plain, &v) > 0.999, "{variant:?} did not fold");
    }
}

#[test]
fn inflections_and_shared_words_score_above_unrelated_text() {
    let embedder = BuiltinEmbedder::new();
    let sim = |a: &str, b: &str| {
        cosine(
            &embedder.embed_one(a).unwrap(),
            &embedder.embed_one(b).unwrap(),
        )
    };
    let related = sim("she loves painting landscapes", "her landscape paintings");
    let unrelated = sim("she loves painting landscapes", "the quarterly tax report");
    assert!(related > 0.3, "related {related}");
    assert!(unrelated.abs() < 0.15, "unrelated {unrelated}");
    // A typo still shares most character n-grams.
    assert!(sim("restaurant", "resturant") > unrelated.abs() + 0.1);
    // Stop words alone still embed (the text has nothing else), and do not dominate.
    assert!(sim("who is it", "who is it") > 0.999);
    assert!(sim("what is the capital", "what is the weather") < sim("capital city", "capital"));
}

#[test]
fn retrieves_the_matching_memory_first() {
    let memories = [
        "I adopted a golden retriever puppy named Biscuit last month.",
        "My sister is getting married in Lisbon next June.",
        "I switched jobs and now work as a nurse at the children's hospital.",
        "We went camping by the lake and saw a huge thunderstorm.",
        "I've been learning to play the violin since January.",
        "Our team shipped the new billing dashboard on Friday.",
    ];
    let queries = [
        ("What is the name of the retriever?", 0),
        ("Where is your sister's wedding?", 1),
        ("Which hospital does she work at now?", 2),
        ("What happened on the camping trip?", 3),
        ("How long has he been learning violin?", 4),
        ("When did the billing dashboard ship?", 5),
    ];
    let embedder = BuiltinEmbedder::new();
    let vectors = embedder.embed(&memories).unwrap();
    for (query, expected) in queries {
        let q = embedder.embed_one(query).unwrap();
        let scores: Vec<f32> = vectors.iter().map(|v| cosine(&q, v)).collect();
        let best = (0..scores.len())
            .max_by(|a, b| scores[*a].total_cmp(&scores[*b]))
            .unwrap();
        assert_eq!(best, expected, "{query:?} ranked {scores:?}");
    }
}
