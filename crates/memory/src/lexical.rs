//! Turning free text into an FTS5 query: words, minus stop words, OR-ed.
//!
//! The index tokenizer is `porter unicode61 remove_diacritics 2` (the full stop is *not* a
//! token character, so "Tbilisi." matches "Tbilisi"); the query side splits on anything
//! that is not a letter or digit, lowercases, drops English stop words and duplicates, and
//! quotes every term so FTS5 operators in user text are inert.

/// Words left out of queries besides the embedder's English stop words
/// ([`mindgate_embed::is_stop_word`]): frequent words that match almost every turn.
const QUERY_EXTRA_STOP_WORDS: &[&str] = &[
    "also", "didn", "doesn", "don", "ever", "get", "got", "isn", "kind", "like", "many", "might",
    "much", "one", "wasn", "yet",
];

/// True for a word left out of queries (`word` is lowercase).
fn is_query_stop_word(word: &str) -> bool {
    mindgate_embed::is_stop_word(word) || QUERY_EXTRA_STOP_WORDS.binary_search(&word).is_ok()
}

/// The query's content words: lowercased, stop words and duplicates removed, in order.
pub fn query_terms(text: &str) -> Vec<String> {
    let mut terms: Vec<String> = Vec::new();
    for word in text.split(|c: char| !c.is_alphanumeric()) {
        if word.is_empty() {
            continue;
        }
        let lower = word.to_lowercase();
        if is_query_stop_word(&lower) || terms.contains(&lower) {
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
        let mut sorted = QUERY_EXTRA_STOP_WORDS.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted, QUERY_EXTRA_STOP_WORDS);
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
