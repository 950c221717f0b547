use chomp_tables::*;
fn main() {
    let n: u32 = std::env::args().nth(1).map(|s| s.parse().unwrap()).unwrap_or(40);
    let u = Universe::tiles(n);
    let r = Ranking::new(&u).unwrap();
    let mut src = sieve::LossSources::default();
    let t0 = std::time::Instant::now();
    let mut total = 0u64;
    for lvl in 1..=n {
        let bits = shard::MappedBits::create(std::path::Path::new("/tmp/marks.bin"), r.size(lvl)).unwrap();
        let res = sieve::sieve_level(&r, lvl, &mut src, &bits);
        total += r.size(lvl);
        if lvl % 10 == 0 || lvl == n { println!("{lvl},{},{} marks={} t={:.2}s", r.size(lvl), res.ranks.len(), res.marks, t0.elapsed().as_secs_f64()); }
    }
    println!("total positions {total}, {:.1} Mpos/s", total as f64 / t0.elapsed().as_secs_f64() / 1e6);
}
