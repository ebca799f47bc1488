//! Turning free text into an FTS5 query: words, minus stop words, OR-ed.
//!
//! The index tokenizer is `porter unicode61 remove_diacritics 2` (the full stop is *not* a
//! token character, so "Tbilisi." matches "Tbilisi"); the query side splits on anything
//! that is not a letter or digit, lowercases, drops English stop words and duplicates, and
//! quotes every term so FTS5 operators in user text are inert.

/// English stop words left out of queries (function words that match almost every turn).
const STOP_WORDS: &[&str] = &[
    "a",
    "about",
    "above",
    "after",
    "again",
    "against",
    "all",
    "also",
    "am",
    "an",
    "and",
    "any",
    "are",
    "as",
    "at",
    "be",
    "because",
    "been",
    "before",
    "being",
    "below",
    "between",
    "both",
    "but",
    "by",
    "can",
    "could",
    "d",
    "did",
    "didn",
    "do",
    "does",
    "doesn",
    "doing",
    "don",
    "down",
    "during",
    "each",
    "ever",
    "few",
    "for",
    "from",
    "further",
    "get",
    "got",
    "had",
    "has",
    "have",
    "having",
    "he",
    "her",
    "here",
    "hers",
    "herself",
    "him",
    "himself",
    "his",
    "how",
    "i",
    "if",
    "in",
    "into",
    "is",
    "isn",
    "it",
    "its",
    "itself",
    "just",
    "kind",
    "like",
    "ll",
    "m",
    "many",
    "me",
    "might",
    "more",
    "most",
    "much",
    "my",
    "myself",
    "no",
    "nor",
    "not",
    "now",
    "of",
    "off",
    "on",
    "once",
    "one",
    "only",
    "or",
    "other",
    "our",
    "ours",
    "ourselves",
    "out",
    "over",
    "own",
    "re",
    "s",
    "same",
    "she",
    "should",
    "so",
    "some",
    "such",
    "t",
    "than",
    "that",
    "the",
    "their",
    "theirs",
    "them",
    "themselves",
    "then",
    "there",
    "these",
    "they",
    "this",
    "those",
    "through",
    "to",
    "too",
    "under",
    "until",
    "up",
    "ve",
    "very",
    "was",
    "wasn",
    "we",
    "were",
    "what",
    "when",
    "where",
    "which",
    "while",
    "who",
    "whom",
    "why",
    "will",
    "with",
    "would",
    "yet",
    "you",
    "your",
    "yours",
    "yourself",
    "yourselves",
];

/// The query's content words: lowercased, stop words and duplicates removed, in order.
pub fn query_terms(text: &str) -> Vec<String> {
    let mut terms: Vec<String> = Vec::new();
    for word in text.split(|c: char| !c.is_alphanumeric()) {
        if word.is_empty() {
            continue;
        }
        let lower = word.to_lowercase();
        if STOP_WORDS.binary_search(&lower.as_str()).is_ok() || terms.contains(&lower) {
            continue;
        }
        terms.push(lower);
    }
    terms
}

/// The FTS5 MATCH expression for `text` (`"w1" OR "w2" …`), or `None` when no content
/// word is left.
pub fn fts_query(text: &str) -> Option<String> {
    let terms = query_terms(text);
    if terms.is_empty() {
        return None;
    }
    Some(
        terms
            .iter()
            .map(|t| format!("\"{t}\""))
            .collect::<Vec<_>>()
            .join(" OR "),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_words_are_sorted_for_binary_search() {
        let mut sorted = STOP_WORDS.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted, STOP_WORDS);
    }

    #[test]
    fn builds_or_queries_of_content_words() {
        assert_eq!(
            fts_query("When did Caroline go to the LGBTQ support group?").as_deref(),
            Some("\"caroline\" OR \"go\" OR \"lgbtq\" OR \"support\" OR \"group\"")
        );
        assert_eq!(fts_query("what is it?"), None);
        assert_eq!(fts_query(""), None);
        // FTS5 syntax in the input is inert.
        assert_eq!(
            fts_query("NEAR(a b) \"x\" OR y*").as_deref(),
            Some("\"near\" OR \"b\" OR \"x\" OR \"y\"")
        );
        assert_eq!(
            fts_query("Tbilisi. Tbilisi").as_deref(),
            Some("\"tbilisi\"")
        );
    }
}
