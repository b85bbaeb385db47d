//! Any bytes, as a document: the reader never panics, and reading it on one thread in one piece
//! gives what reading it on two threads in pieces of a few dozen bytes gives (the cuts between
//! pieces are guesses; the result must not depend on them).
#![no_main]

use std::io::Cursor;

use _native::event::Promoted;
use _native::json::Limits;
use _native::stream::{Options, Reader};
use libfuzzer_sys::fuzz_target;

fn promoted() -> Promoted {
    let spec: Vec<(String, String, String)> = [
        ("External id", "external_id", "int"),
        ("stream", "stream", "int"),
        ("Input Dims", "input_dims", "dims"),
        ("Input type", "input_types", "strlist"),
        ("grid", "grid", "intlist"),
        ("blocks per SM", "blocks_per_sm", "float"),
        ("Collective name", "collective_name", "str"),
    ]
    .iter()
    .map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()))
    .collect();
    Promoted::new(&spec).unwrap()
}

fn read(data: &[u8], threads: usize, piece: usize) -> String {
    let opts = Options { threads, piece, max_event: 1 << 16, max_tail: 1 << 16, limits: Limits { depth: 32, digits: 40 }, array: data.first() == Some(&b'[') };
    let mut r = Reader::from_source(Box::new(Cursor::new(data.to_vec())), promoted(), opts);
    let mut out = String::new();
    loop {
        match r.next_batch() {
            Ok(Some(o)) => {
                for (name, col) in &o.columns {
                    out.push_str(&format!("{name}={col:?};"));
                }
                out.push_str(&format!("odd={:?}\n", o.odd));
            }
            Ok(None) => break,
            Err(e) => {
                out.push_str(&format!("error {e:?}"));
                break;
            }
        }
    }
    out.push_str(&format!("events={} tail={:?}", r.events(), r.tail()));
    out
}

fuzz_target!(|data: &[u8]| {
    let whole = read(data, 1, 1 << 20);
    let cut = read(data, 2, 24);
    assert_eq!(whole, cut);
});
