//! Which of a turn's tool calls may run at the same time.
//!
//! Calls run in the order the model wrote them, but consecutive read-only
//! calls share a batch and run concurrently; a call that changes something
//! runs alone, after everything before it and before everything after it.
//! So "write hello.md, then read it" in one turn reads what was written,
//! and several reads cost the time of the slowest.

/// Splits call indices `0..read_only.len()` into batches, in order.
pub(crate) fn batches(read_only: &[bool]) -> Vec<Vec<usize>> {
    let mut out: Vec<Vec<usize>> = Vec::new();
    for (index, &reads) in read_only.iter().enumerate() {
        match out.last_mut() {
            Some(batch) if reads && batch.first().is_some_and(|&first| read_only[first]) => {
                batch.push(index);
            }
            _ => out.push(vec![index]),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_are_barriers() {
        assert_eq!(
            batches(&[true, true, false, true, false, false]),
            vec![vec![0, 1], vec![2], vec![3], vec![4], vec![5]]
        );
        assert!(batches(&[]).is_empty());
    }
}
