//! Reciprocal rank fusion of ranked lists.

use std::collections::HashMap;

/// The RRF constant.
pub const RRF_K: f64 = 60.0;

/// Fuses ranked lists of ids: each id scores Σ 1/(k + rank) over the lists it appears in
/// (rank from 1). The result is ordered by score, highest first; ties keep first-seen
/// order (lists in the order given, each from its top).
pub fn reciprocal_rank_fusion<T: Copy + Eq + std::hash::Hash>(
    lists: &[&[T]],
    k: f64,
) -> Vec<(T, f64)> {
    let mut order: Vec<(T, f64)> = Vec::new();
    let mut index: HashMap<T, usize> = HashMap::new();
    for list in lists {
        for (rank, id) in list.iter().enumerate() {
            let add = 1.0 / (k + rank as f64 + 1.0);
            match index.get(id) {
                Some(&i) => order[i].1 += add,
                None => {
                    index.insert(*id, order.len());
                    order.push((*id, add));
                }
            }
        }
    }
    // A stable sort keeps first-seen order among equal scores.
    order.sort_by(|a, b| b.1.total_cmp(&a.1));
    order
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fuses_and_breaks_ties_by_first_seen() {
        let lexical = [1, 2, 3];
        let vector = [3, 4, 1];
        let fused = reciprocal_rank_fusion(&[&lexical, &vector], 60.0);
        let ids: Vec<i32> = fused.iter().map(|(id, _)| *id).collect();
        // 1: 1/61 + 1/63, 3: 1/63 + 1/61 (tie, 1 seen first), 2: 1/62, 4: 1/62 (tie).
        assert_eq!(ids, vec![1, 3, 2, 4]);
        assert!((fused[0].1 - (1.0 / 61.0 + 1.0 / 63.0)).abs() < 1e-12);
        assert_eq!(fused[0].1, fused[1].1);
        assert!(reciprocal_rank_fusion::<i32>(&[&[], &[]], 60.0).is_empty());
    }
}
