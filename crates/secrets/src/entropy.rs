//! Shannon entropy in bits per byte, as gitleaks computes it for a rule's
//! `entropy` floor.

pub(crate) fn shannon(data: &[u8]) -> f64 {
    if data.is_empty() {
        return 0.0;
    }
    let mut counts = [0usize; 256];
    for &byte in data {
        counts[usize::from(byte)] += 1;
    }
    #[allow(clippy::cast_precision_loss)] // lengths are far below 2^52
    let len = data.len() as f64;
    counts
        .iter()
        .filter(|&&n| n > 0)
        .map(|&n| {
            #[allow(clippy::cast_precision_loss)]
            let p = n as f64 / len;
            -p * p.log2()
        })
        .sum()
}
