//! The decoders on mutated files (a short run of what
//! `examples/fuzz_decoders.rs` runs at length): every input of
//! `fuzz/corpus/` with bytes flipped, overwritten and cut is decoded or
//! refused, never a panic.

use chomp_tables::store::decode_any;
use proptest::prelude::*;
use std::path::Path;

fn corpus() -> Vec<Vec<u8>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz").join("corpus");
    let mut files: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    files.iter().map(|p| std::fs::read(p).unwrap()).collect()
}

#[test]
fn the_corpus_decodes() {
    for (i, bytes) in corpus().iter().enumerate() {
        assert!(decode_any(Path::new("corpus"), bytes).is_ok(), "corpus file {i}: {:?}", decode_any(Path::new("corpus"), bytes));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]
    #[test]
    fn mutated_files_never_panic(file in 0usize..8, edits in prop::collection::vec((any::<usize>(), any::<u8>()), 1..6), cut in any::<Option<usize>>()) {
        let corpus = corpus();
        let mut bytes = corpus[file % corpus.len()].clone();
        for (at, v) in edits {
            let n = bytes.len();
            bytes[at % n] ^= v.max(1);
        }
        if let Some(c) = cut {
            let n = bytes.len();
            bytes.truncate(c % (n + 1));
        }
        let _ = decode_any(Path::new("fuzzed"), &bytes);
    }
}
