//! Linearizations of a test: every order of the two suffixes' calls that
//! keeps each suffix's own order, run sequentially after the prefix.

/// Every interleaving of `a` calls of suffix 1 and `b` of suffix 2, as the
/// phase (1 or 2) of each position.
pub fn interleavings(a: usize, b: usize) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut current = Vec::with_capacity(a + b);
    fn walk(a: usize, b: usize, current: &mut Vec<u8>, out: &mut Vec<Vec<u8>>) {
        if a == 0 && b == 0 {
            out.push(current.clone());
            return;
        }
        if a > 0 {
            current.push(1);
            walk(a - 1, b, current, out);
            current.pop();
        }
        if b > 0 {
            current.push(2);
            walk(a, b - 1, current, out);
            current.pop();
        }
    }
    walk(a, b, &mut current, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_binomial() {
        assert_eq!(interleavings(2, 2).len(), 6);
        assert_eq!(interleavings(5, 5).len(), 252);
        assert_eq!(interleavings(1, 0), vec![vec![1]]);
    }
}
