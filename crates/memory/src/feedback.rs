//! Query expansion from the first lexical hits (pseudo-relevance feedback): the content
//! words of the best few matches that the query does not already hold are added to it,
//! the expanded query is searched again, and both lexical lists are fused. A question
//! naming one side of a link ("what did the person who … do") then also finds the records
//! that share the entities of the first hits (multi-hop recall, crates/memory/README.md).

use crate::fusion::weighted_score_fusion;
use crate::lexical::query_terms;

/// Most words one feedback pass adds to the query.
pub const FEEDBACK_TERMS: usize = 12;

/// Weight of the expanded query's list against the original's (1).
pub const FEEDBACK_WEIGHT: f64 = 1.0;

/// The words `texts` add to `query`: content words of the texts not in the query, most
/// shared among the texts first, then in order of appearance, at most `limit`.
pub fn expansion_terms(query: &str, texts: &[&str], limit: usize) -> Vec<String> {
    let asked = query_terms(query);
    let mut counted: Vec<(String, usize)> = Vec::new();
    for text in texts {
        for term in query_terms(text) {
            if asked.contains(&term) || term.chars().all(|c| c.is_ascii_digit()) {
                continue;
            }
            match counted.iter_mut().find(|(t, _)| *t == term) {
                Some((_, n)) => *n += 1,
                None => counted.push((term, 1)),
            }
        }
    }
    // A stable sort keeps the order of appearance among equal counts.
    counted.sort_by_key(|c| std::cmp::Reverse(c.1));
    counted.into_iter().take(limit).map(|(t, _)| t).collect()
}

/// The query searched in the feedback pass: the original words, then `extra`.
pub fn expanded_query(query: &str, extra: &[String]) -> String {
    let mut out = query.to_owned();
    for term in extra {
        out.push(' ');
        out.push_str(term);
    }
    out
}

/// The two lexical lists fused by normalised score, the expanded one at
/// [`FEEDBACK_WEIGHT`]: `(rowid, fused score)`, best first, at most `pool`.
pub fn fuse(first: &[(i64, f64)], second: &[(i64, f64)], pool: usize) -> Vec<(i64, f64)> {
    let mut fused = weighted_score_fusion(&[(first, 1.0), (second, FEEDBACK_WEIGHT)]);
    fused.truncate(pool);
    fused
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adds_the_shared_new_words_first() {
        let terms = expansion_terms(
            "Where did Melanie camp?",
            &[
                "Melanie: we camped at the beach near Dover in 2022",
                "Melanie: Dover beach again, the kids loved it",
            ],
            3,
        );
        assert_eq!(terms, vec!["beach", "dover", "camped"]);
        assert_eq!(
            expanded_query("Where?", &["beach".to_owned()]),
            "Where? beach"
        );
    }

    #[test]
    fn fuses_and_cuts_to_the_pool() {
        let first = [(1, 3.0), (2, 2.0), (3, 1.0)];
        let second = [(4, 9.0), (1, 5.0), (2, 1.0)];
        let fused = fuse(&first, &second, 3);
        assert_eq!(fused.len(), 3);
        assert_eq!(fused[0].0, 1);
    }
}
