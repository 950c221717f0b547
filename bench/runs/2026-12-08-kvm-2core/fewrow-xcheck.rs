//! Cross-check: positions with every row at most `small` answered alike by a
//! few-row table of k×small and one of k×large (an outcome does not depend on the box).
use chomp_tables::fewrow::{FewRowDir, FewRowPosition};
fn main() {
    let a: Vec<String> = std::env::args().collect();
    let (small, large) = (FewRowDir::open(a[1].as_ref()).unwrap(), FewRowDir::open(a[2].as_ref()).unwrap());
    let count: u64 = a[3].parse().unwrap();
    let (k, n) = (small.shape().k() as usize, small.shape().n());
    assert_eq!(k, large.shape().k() as usize);
    let mut s: u64 = 0x9E3779B97F4A7C15 ^ count;
    let mut next = || { s = s.wrapping_add(0x9E3779B97F4A7C15); let mut z = s; z = (z ^ (z >> 30)).wrapping_mul(0xBF58476D1CE4E5B9); z = (z ^ (z >> 27)).wrapping_mul(0x94D049BB133111EB); z ^ (z >> 31) };
    let (mut losses, mut checked) = (0u64, 0u64);
    let t0 = std::time::Instant::now();
    for i in 0..count {
        let mut rows: Vec<u32> = (0..k).map(|_| (next() % (u64::from(n) + 1)) as u32).collect();
        rows.sort_unstable_by(|x, y| y.cmp(x));
        rows[0] = rows[0].max(1);
        let p = FewRowPosition::new(&rows).unwrap();
        let x = small.is_loss(&p).unwrap();
        assert_eq!(x, large.is_loss(&p).unwrap(), "{rows:?}");
        // Every 16th position: the loss of its prefix in the small table, if any.
        if i % 16 == 1 && !x {
            let mut last = rows.clone();
            for v in 0..=rows[k - 2] {
                last[k - 1] = v;
                if last.iter().all(|&r| r == 0) { continue; }
                let q = FewRowPosition::new(&last).unwrap();
                if small.is_loss(&q).unwrap() {
                    assert!(large.is_loss(&q).unwrap(), "{last:?}");
                    losses += 1;
                    break;
                }
            }
        }
        losses += u64::from(x);
        checked += 1;
    }
    println!("{checked} positions of {}x{n} answered alike by both tables ({losses} losses among them and their prefixes' losses), {:.1} s", k, t0.elapsed().as_secs_f64());
}
