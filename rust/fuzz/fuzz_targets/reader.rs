//! Any bytes, as a document: the reader never panics, and reading it on one thread in one piece
//! gives what reading it on two threads in pieces of a few dozen bytes gives, row by row, or the
//! same error at the same byte (the cuts between pieces are guesses; the result must not depend
//! on them).
#![no_main]

use std::io::Cursor;

use _native::event::Promoted;
use _native::json::Limits;
use _native::stream::{Options, Reader};
use arrow_array::{Array, Int64Array};
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
    let opts =
        Options { threads, piece, max_event: 1 << 16, max_tail: 1 << 16, limits: Limits { depth: 32, digits: 40 }, array: data.first() == Some(&b'['), skip: 0 };
    let mut r = Reader::from_source(Box::new(Cursor::new(data.to_vec())), promoted(), opts);
    // row by row, in uid order: how rows (and the events left to Python) fall into batches
    // depends on the pieces
    let mut rows: Vec<(i64, String)> = vec![];
    loop {
        match r.next_batch() {
            Ok(Some(o)) => {
                let n = o.columns.first().map_or(0, |(_, c)| c.len());
                let uids = o.columns[0].1.as_any().downcast_ref::<Int64Array>().expect("uid first");
                for i in 0..n {
                    let mut row = String::new();
                    for (name, col) in &o.columns {
                        if col.is_valid(i) {
                            row.push_str(&format!("{name}={:?};", col.slice(i, 1)));
                        }
                    }
                    rows.push((uids.value(i), row));
                }
                for (uid, bytes) in &o.odd {
                    rows.push((*uid, format!("odd {bytes:?}")));
                }
            }
            Ok(None) => break,
            // the rows before an error may come in a batch or not (the caller drops them all)
            Err(e) => {
                r.close(true);
                return format!("error {e:?}");
            }
        }
    }
    // as the Python driver does: the threads end here (LeakSanitizer would take a thread still
    // ending for a leak)
    r.close(true);
    rows.sort();
    let mut out: String = rows.into_iter().map(|(u, r)| format!("{u}: {r}\n")).collect();
    out.push_str(&format!("events={} tail={:?}", r.events(), r.tail()));
    out
}

fuzz_target!(|data: &[u8]| {
    let whole = read(data, 1, 1 << 20);
    let cut = read(data, 2, 24);
    assert_eq!(whole, cut);
});
