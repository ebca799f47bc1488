//! The entity graph's naming rules: the folded key of a name and how names resolve to a
//! root entity beyond it.

use unicode_normalization::UnicodeNormalization;

/// The folded key of a name: NFKC, lowercase, runs of whitespace as one space, trimmed.
pub fn normalize_name(name: &str) -> String {
    let folded: String = name.nfkc().collect::<String>().to_lowercase();
    folded.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// How names are matched beyond the folded key: cosine of name embeddings, when a real
/// (semantic) embedder is active.
#[derive(Clone, Copy)]
pub(crate) struct Resolver<'a> {
    /// The embedder and its key, when embedding similarity may merge names.
    pub semantic: Option<(&'a dyn mindgate_embed::Embedder, &'a str)>,
    /// Cosine at or above which a new name joins an existing root.
    pub threshold: f32,
}

impl Resolver<'_> {
    /// Lexical matching only.
    pub const LEXICAL: Resolver<'static> = Resolver {
        semantic: None,
        threshold: 1.0,
    };
}

impl<'a> Resolver<'a> {
    /// The resolver of a store: embedding merges only with a real embedder (the builtin
    /// hashed n-grams would merge "Anna" and "Annabel").
    pub fn of(
        embedder: Option<&'a std::sync::Arc<dyn mindgate_embed::Embedder>>,
        key: Option<&'a String>,
        threshold: f32,
    ) -> Self {
        match (embedder, key) {
            (Some(e), Some(key)) if e.id().provider != "builtin" => Resolver {
                semantic: Some((e.as_ref(), key.as_str())),
                threshold,
            },
            _ => Resolver::LEXICAL,
        }
    }
}
