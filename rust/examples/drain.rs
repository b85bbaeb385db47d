//! Reads an uncompressed trace through the reader, as the Python driver does, without Python:
//! a fixed load for profilers (`valgrind --tool=callgrind`, perf) and a dump of every batch for
//! comparing two builds.
//!
//!     cargo run --release --no-default-features --example drain -- TRACE.json SPEC.tsv [THREADS] [dump]
//!
//! SPEC.tsv holds the promoted keys of `args`, one `key<TAB>column<TAB>kind` a line (the Python
//! side's `tracecols.read.native._SPEC`).

use _native::event::Promoted;
use _native::json::Limits;
use _native::stream::{Options, Reader};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        eprintln!("usage: drain TRACE.json SPEC.tsv [THREADS] [dump]");
        std::process::exit(2);
    }
    let spec: Vec<(String, String, String)> = std::fs::read_to_string(&args[2])
        .expect("a readable spec file")
        .lines()
        .filter(|l| !l.is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            (f[0].to_string(), f[1].to_string(), f[2].to_string())
        })
        .collect();
    let threads = args.get(3).map_or(1, |t| t.parse().expect("a number of threads"));
    let dump = args.get(4).is_some_and(|a| a == "dump");
    let opts = Options {
        threads,
        piece: 4 << 20,
        max_event: 64 << 20,
        max_tail: 64 << 20,
        limits: Limits { depth: 900, digits: 4300 },
        array: false,
        skip: 0,
    };
    let mut r = Reader::start(&args[1], Promoted::new(&spec).expect("a valid spec"), opts).expect("a readable trace");
    let (mut batches, mut odd) = (0, 0);
    loop {
        match r.next_batch() {
            Ok(Some(o)) => {
                batches += 1;
                odd += o.odd.len();
                if dump {
                    for (name, col) in &o.columns {
                        println!("{name} {col:?}");
                    }
                    for (uid, bytes) in &o.odd {
                        println!("odd {uid} {bytes:?}");
                    }
                }
            }
            Ok(None) => break,
            Err(e) => {
                eprintln!("{e:?}");
                break;
            }
        }
    }
    r.close(true);
    eprintln!("events {} batches {batches} odd {odd}", r.events());
}
