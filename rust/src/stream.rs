//! The events array of one file, read in pieces of a few MB by a pool of threads, handed out in
//! order.
//!
//! A producer thread reads (and inflates) the file and cuts it into pieces after a `}` that is
//! followed by `,` and `{`: a guess at a place between two events, since such bytes can also
//! sit inside a string. Worker threads parse the pieces as if the guess were right. The
//! consumer takes the pieces in order and keeps a worker's result only when the piece before it
//! ended exactly between two events (its parse, from a place known to be right, consumed every
//! byte and stands after an event): then the guess was right. Otherwise it parses the bytes
//! left over and the piece again itself, from the state the last piece ended in. So the result
//! is always that of one sequential parse.
//!
//! Memory is bounded by construction: at most `threads + 2` pieces are in flight (a piece is
//! `piece` bytes, plus the cut-off start of an event), whitespace between events is never
//! held, an event (or what remains of the bytes after the array) may not exceed `max_event`
//! (`max_tail`) bytes, and nesting deeper than `limits.depth` is refused.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::Read;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use arrow_array::ArrayRef;

use crate::columns::Room;
use crate::event::{parse_piece, Batch, Finished, Parsed, Promoted, State};
use crate::json::{Fail, Limits};

pub struct Options {
    pub threads: usize,
    pub piece: usize,
    pub max_event: usize,
    pub max_tail: usize,
    pub limits: Limits,
    /// the document is a bare array of events (else an object with `traceEvents`)
    pub array: bool,
    /// `traceEvents` arrays to pass over before the one read
    pub skip: usize,
}

/// Why a read stopped.
#[derive(Debug)]
pub enum ReadError {
    /// not JSON here (decompressed byte offset): what was expected
    Syntax(u64, String),
    /// beyond one of the bounds of Options
    Bound(u64, String),
    /// the file could not be read, or its gzip data is damaged
    Io(u64, String),
    /// this many more `traceEvents` arrays follow the one read: read again, passing over them but
    /// the last (JSON parsers keep the last of duplicate keys)
    Again(u64),
}

pub struct Piece {
    seq: u64,
    /// decompressed offset of the piece's first byte
    offset: u64,
    bytes: Vec<u8>,
    last: bool,
    /// the bytes read from the stream so far, for the progress line
    read: u64,
}

/// A worker's parse of a piece, from the state a piece starts in when its cut is right.
struct Guess {
    rows: Finished,
    parsed: Parsed,
}

enum Work {
    Piece(Piece, Option<Guess>),
    Failed(u64, ReadError),
}

impl Work {
    fn seq(&self) -> u64 {
        match self {
            Work::Piece(p, _) => p.seq,
            Work::Failed(s, _) => *s,
        }
    }
}

pub struct Output {
    pub columns: Vec<(String, ArrayRef)>,
    /// events for the Python reader: (uid, bytes)
    pub odd: Vec<(i64, Vec<u8>)>,
    pub read: u64,
}

pub struct Reader {
    rx: Receiver<Work>,
    /// None once closed: the producer's wait for a slot then ends
    slot_back: Option<SyncSender<()>>,
    /// piece buffers handed back to the producer (no fresh pages to fault in for every piece)
    spare: SyncSender<Vec<u8>>,
    promoted: Arc<Promoted>,
    opts: Arc<Options>,
    ahead: BTreeMap<u64, Work>,
    next: u64,
    state: State,
    carry: Vec<u8>,
    carry_offset: u64,
    /// the sizes of the columns of the last piece parsed here (see Batch::new)
    room: Vec<Room>,
    events: i64,
    tail: Option<Tail>,
    done: bool,
    threads: Vec<JoinHandle<()>>,
}

/// The bytes of a document in order, appended to a buffer as they come (without zeroing its room
/// first, as `Read` would have it).
pub trait Bytes: Send {
    /// Append up to `want` bytes to `out`: fewer only at the end of the stream.
    fn fill(&mut self, out: &mut Vec<u8>, want: usize) -> std::io::Result<usize>;
}

/// Any reader as `Bytes`, through a small buffer that stays in cache.
struct Reading<R> {
    src: R,
    scratch: Vec<u8>,
}

impl<R: Read + Send> Bytes for Reading<R> {
    fn fill(&mut self, out: &mut Vec<u8>, want: usize) -> std::io::Result<usize> {
        let mut got = 0;
        while got < want {
            let k = (want - got).min(self.scratch.len());
            let n = match self.src.read(&mut self.scratch[..k]) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            out.extend_from_slice(&self.scratch[..n]);
            got += n;
        }
        Ok(got)
    }
}

/// Bytes handed over by the caller (`Feeder`), as a stream: the caller inflates a gzip file with
/// its own (faster) inflater on a thread of its own. The buffers it sends come back to it once
/// read (`Fed::new`), so that the same few carry the whole file.
pub struct Fed {
    rx: Receiver<Result<Vec<u8>, String>>,
    back: SyncSender<Vec<u8>>,
    chunk: Vec<u8>,
    pos: usize,
}

pub type Feeder = SyncSender<Result<Vec<u8>, String>>;

impl Fed {
    /// A stream, the sender that feeds it (bytes, then an empty chunk or dropping it for the end,
    /// or an error) and where the buffers it has read come back.
    pub fn new() -> (Fed, Feeder, Receiver<Vec<u8>>) {
        let (tx, rx) = sync_channel(2);
        let (back, returned) = sync_channel(4);
        (Fed { rx, back, chunk: vec![], pos: 0 }, tx, returned)
    }
}

impl Bytes for Fed {
    fn fill(&mut self, out: &mut Vec<u8>, want: usize) -> std::io::Result<usize> {
        let mut got = 0;
        while got < want {
            if self.pos == self.chunk.len() {
                match self.rx.recv() {
                    Ok(Ok(c)) if c.is_empty() => break,
                    Ok(Ok(c)) => {
                        let _ = self.back.try_send(std::mem::replace(&mut self.chunk, c));
                        self.pos = 0;
                    }
                    Ok(Err(e)) => return Err(std::io::Error::other(e)),
                    Err(_) => break,
                }
            }
            let n = (want - got).min(self.chunk.len() - self.pos);
            out.extend_from_slice(&self.chunk[self.pos..self.pos + n]);
            self.pos += n;
            got += n;
        }
        Ok(got)
    }
}

fn io_error(at: u64, e: std::io::Error) -> ReadError {
    ReadError::Io(at, e.to_string())
}

fn open(path: &str) -> Result<Box<dyn Read + Send>, ReadError> {
    let mut f = File::open(path).map_err(|e| io_error(0, e))?;
    let mut magic = [0u8; 2];
    let n = f.read(&mut magic).map_err(|e| io_error(0, e))?;
    if n == 2 && magic == [0x1f, 0x8b] {
        // the caller inflates (ISA-L, on a thread of its own) and feeds the bytes: Reader::from_source
        return Err(ReadError::Io(0, "gzip data: feed it inflated".into()));
    }
    Ok(Box::new(File::open(path).map_err(|e| io_error(0, e))?))
}

impl Reader {
    /// Read the uncompressed file at `path`.
    pub fn start(path: &str, promoted: Promoted, opts: Options) -> Result<Reader, ReadError> {
        Ok(Reader::from_source(open(path)?, promoted, opts))
    }

    /// Read the decompressed bytes of a document from `src`.
    pub fn from_source(src: Box<dyn Read + Send>, promoted: Promoted, opts: Options) -> Reader {
        Reader::from_bytes(Box::new(Reading { src, scratch: vec![0; 1 << 16] }), promoted, opts)
    }

    /// Read the decompressed bytes of a document from `src`.
    pub fn from_bytes(src: Box<dyn Bytes>, promoted: Promoted, opts: Options) -> Reader {
        let promoted = Arc::new(promoted);
        let opts = Arc::new(opts);
        let workers = if opts.threads > 1 { opts.threads } else { 0 };
        // a slot per piece in flight: the producer takes one, the consumer gives it back
        let slots = opts.threads + 2;
        let (slot_back, slot_rx) = sync_channel::<()>(slots);
        for _ in 0..slots {
            slot_back.send(()).expect("the channel has room for every slot");
        }
        let (piece_tx, piece_rx) = sync_channel::<Work>(slots);
        let (done_tx, done_rx) = sync_channel::<Work>(slots);
        let (spare, spare_rx) = sync_channel::<Vec<u8>>(slots);
        let mut threads = vec![];
        let o = opts.clone();
        let to_workers = if workers > 0 { piece_tx } else { done_tx.clone() };
        threads.push(std::thread::spawn(move || produce(src, &o, to_workers, slot_rx, spare_rx)));
        if workers > 0 {
            let shared = Arc::new(Mutex::new(piece_rx));
            for _ in 0..workers {
                let (rx, tx, p, o) = (shared.clone(), done_tx.clone(), promoted.clone(), opts.clone());
                threads.push(std::thread::spawn(move || work(&rx, &tx, &p, &o)));
            }
        }
        drop(done_tx);
        Reader {
            rx: done_rx,
            slot_back: Some(slot_back),
            spare,
            promoted,
            opts,
            ahead: BTreeMap::new(),
            next: 0,
            state: State::First,
            carry: vec![],
            carry_offset: 0,
            room: vec![],
            events: 0,
            tail: None,
            done: false,
            threads,
        }
    }

    /// How many events were read (once the read is done: all of them).
    pub fn events(&self) -> i64 {
        self.events
    }

    /// The bytes after the array's `]`, whitespace outside strings left out (once done).
    pub fn tail(&self) -> Option<&[u8]> {
        self.tail.as_ref().map(|t| &t.bytes[..])
    }

    /// The next piece's events, in order; None once the array and the rest of the file are read.
    pub fn next_batch(&mut self) -> Result<Option<Output>, ReadError> {
        loop {
            if self.done {
                return Ok(None);
            }
            let work = self.take(self.next)?;
            self.next += 1;
            if let Some(s) = &self.slot_back {
                let _ = s.send(());
            }
            let (piece, guess) = match work {
                Work::Failed(_, e) => {
                    self.done = true;
                    return Err(e);
                }
                Work::Piece(p, s) => (p, s),
            };
            if let Some(t) = &mut self.tail {
                t.feed(&piece.bytes, piece.offset, self.opts.max_tail)?;
                if piece.last {
                    self.done = true;
                    t.end()?;
                }
                continue;
            }
            let guess_ok = self.carry.is_empty()
                && match self.state {
                    State::First => piece.seq == 0,
                    State::After => piece.seq > 0,
                    State::Comma => false,
                };
            let (rows, parsed, buf, base) = match guess {
                Some(g) if guess_ok => (g.rows, g.parsed, piece.bytes, piece.offset),
                _ => {
                    let base = if self.carry.is_empty() { piece.offset } else { self.carry_offset };
                    let mut buf = std::mem::take(&mut self.carry);
                    if buf.is_empty() {
                        buf = piece.bytes;
                    } else {
                        buf.extend_from_slice(&piece.bytes);
                        let _ = self.spare.try_send(piece.bytes);
                    }
                    let mut b = Batch::new(&self.promoted, &self.room);
                    let p = parse_piece(&buf, self.state, &mut b, &self.promoted, self.opts.limits);
                    self.room = b.room();
                    (b.finish(&self.promoted), p, buf, base)
                }
            };
            if let Some(e) = parsed.error {
                self.done = true;
                return Err(at(e, base));
            }
            let uid0 = self.events;
            self.events += rows.events() as i64;
            if let Some(end) = parsed.end {
                let mut t = Tail::default();
                t.feed(&buf[end + 1..], base + end as u64 + 1, self.opts.max_tail)?;
                if piece.last {
                    self.done = true;
                    t.end()?;
                }
                self.tail = Some(t);
            } else {
                self.state = parsed.state;
                self.carry_offset = base + parsed.consumed as u64;
                if parsed.consumed < buf.len() {
                    self.carry = buf[parsed.consumed..].to_vec();
                }
                if self.carry.len() > self.opts.max_event {
                    self.done = true;
                    let max = size(self.opts.max_event);
                    return Err(ReadError::Bound(
                        self.carry_offset,
                        format!("an event longer than {max}, the reader's bound on one event"),
                    ));
                }
                if piece.last {
                    self.done = true;
                    return Err(ReadError::Syntax(
                        base + buf.len() as u64,
                        "unexpected end of file (truncated trace?)".into(),
                    ));
                }
            }
            let _ = self.spare.try_send(buf);
            if rows.events() == 0 {
                continue;
            }
            let (columns, odd) = rows.with_uids(uid0);
            return Ok(Some(Output { columns, odd, read: piece.read }));
        }
    }

    fn take(&mut self, seq: u64) -> Result<Work, ReadError> {
        loop {
            if let Some(w) = self.ahead.remove(&seq) {
                return Ok(w);
            }
            match self.rx.recv() {
                Ok(w) => {
                    if w.seq() == seq {
                        return Ok(w);
                    }
                    self.ahead.insert(w.seq(), w);
                }
                Err(_) => return Err(ReadError::Io(0, "the reader's threads stopped early".into())),
            }
        }
    }
}

impl Reader {
    /// Stop the threads: a read left half-way ends here (its producer and workers find their
    /// channels closed). Joins them when `wait`.
    pub fn close(&mut self, wait: bool) {
        self.done = true;
        let (_, rx) = sync_channel::<Work>(0);
        self.rx = rx;
        self.ahead.clear();
        self.slot_back = None;
        let threads: Vec<_> = self.threads.drain(..).collect();
        if wait {
            for t in threads {
                let _ = t.join();
            }
        }
    }
}

impl Drop for Reader {
    fn drop(&mut self) {
        // not joined here: a fed reader's producer may wait on a feeder that needs the GIL
        self.close(false);
    }
}

fn size(n: usize) -> String {
    match n {
        n if n >= 1 << 20 => format!("{} MiB", n >> 20),
        n if n >= 1 << 10 => format!("{} KiB", n >> 10),
        n => format!("{n} bytes"),
    }
}

fn at(e: Fail, base: u64) -> ReadError {
    match e {
        Fail::Syntax(i, what) => ReadError::Syntax(base + i as u64, format!("invalid JSON: expected {what}")),
        Fail::Deep(i) => ReadError::Syntax(base + i as u64, "JSON nested too deeply".into()),
        Fail::Incomplete => ReadError::Syntax(base, "unexpected end of file".into()),
    }
}

/// The bytes after the events array, without whitespace outside strings. It counts the further
/// `traceEvents` arrays (see ReadError::Again), holding nothing from the first one on.
#[derive(Default)]
struct Tail {
    bytes: Vec<u8>,
    in_string: bool,
    escape: bool,
    /// nesting below the top-level object
    depth: usize,
    /// the text of the string being read at the top level (up to 16 bytes), and whether it is longer
    text: Vec<u8>,
    long: bool,
    /// the last token was the string "traceEvents" (then ':')
    events_string: bool,
    events_key: bool,
    /// further traceEvents arrays found
    arrays: u64,
}

impl Tail {
    fn feed(&mut self, b: &[u8], offset: u64, max: usize) -> Result<(), ReadError> {
        for &c in b {
            if self.in_string {
                if self.escape {
                    self.escape = false;
                } else if c == b'\\' {
                    self.escape = true;
                    self.long = true;
                } else if c == b'"' {
                    self.in_string = false;
                    self.events_string = self.depth == 0 && !self.long && self.text == b"traceEvents";
                } else if self.text.len() < 16 {
                    self.text.push(c);
                } else {
                    self.long = true;
                }
            } else {
                if crate::json::is_ws(c) {
                    continue;
                }
                let (was_string, was_key) = (self.events_string, self.events_key);
                self.events_string = false;
                self.events_key = false;
                match c {
                    b'"' => {
                        self.in_string = true;
                        self.text.clear();
                        self.long = false;
                    }
                    b':' => self.events_key = was_string,
                    b'[' | b'{' => {
                        if c == b'[' && was_key && self.depth == 0 {
                            self.arrays += 1;
                        }
                        self.depth += 1;
                    }
                    b']' | b'}' => self.depth = self.depth.saturating_sub(1),
                    _ => {}
                }
            }
            if self.arrays == 0 {
                self.bytes.push(c);
            }
        }
        if self.bytes.len() > max {
            let max = size(max);
            return Err(ReadError::Bound(offset, format!("more than {max} of JSON after the events array")));
        }
        Ok(())
    }

    /// At the end of the document: Again when it holds further traceEvents arrays.
    fn end(&self) -> Result<(), ReadError> {
        if self.arrays > 0 {
            return Err(ReadError::Again(self.arrays));
        }
        Ok(())
    }
}

fn work(rx: &Mutex<Receiver<Work>>, tx: &SyncSender<Work>, p: &Promoted, o: &Options) {
    let mut room = vec![];
    loop {
        let w = match rx.lock() {
            Ok(r) => match r.recv() {
                Ok(w) => w,
                Err(_) => return,
            },
            Err(_) => return,
        };
        let w = match w {
            Work::Piece(piece, _) => {
                let state = if piece.seq == 0 { State::First } else { State::After };
                let mut b = Batch::new(p, &room);
                let parsed = parse_piece(&piece.bytes, state, &mut b, p, o.limits);
                room = b.room();
                Work::Piece(piece, Some(Guess { rows: b.finish(p), parsed }))
            }
            f => f,
        };
        if tx.send(w).is_err() {
            return;
        }
    }
}

/// Read `src` to its end: find the events array, then send pieces of it (and of what follows).
fn produce(mut src: Box<dyn Bytes>, o: &Options, tx: SyncSender<Work>, slots: Receiver<()>, spare: Receiver<Vec<u8>>) {
    let mut seq = 0u64;
    let mut read = 0u64;
    let fail = |seq: u64, e: ReadError| {
        let _ = tx.send(Work::Failed(seq, e));
    };
    let mut head = Head::new(o.array, o.skip);
    let mut pending: Vec<u8>;
    let mut offset: u64;
    // the head: everything up to the array's `[`
    let mut chunk = Vec::with_capacity(1 << 16);
    loop {
        chunk.clear();
        let n = match src.fill(&mut chunk, 1 << 16) {
            Ok(n) => n,
            Err(e) => return fail(seq, io_error(read, e)),
        };
        if n == 0 {
            return fail(seq, ReadError::Syntax(read, "no events array".into()));
        }
        if let Some(k) = head.feed(&chunk[..n]) {
            pending = Vec::with_capacity(o.piece + (1 << 16));
            pending.extend_from_slice(&chunk[k..n]);
            offset = read + k as u64;
            read += n as u64;
            break;
        }
        read += n as u64;
    }
    // the pieces
    loop {
        let mut last = false;
        if pending.len() < o.piece {
            let want = (o.piece - pending.len()) as u64;
            match src.fill(&mut pending, want as usize) {
                Ok(n) => {
                    read += n as u64;
                    last = (n as u64) < want;
                }
                Err(e) => return fail(seq, io_error(read, e)),
            }
        }
        let cut = if last { pending.len() } else { cut_point(&pending).unwrap_or(pending.len()) };
        let mut next = spare.try_recv().unwrap_or_default();
        next.clear();
        next.extend_from_slice(&pending[cut..]);
        pending.truncate(cut);
        let bytes = std::mem::replace(&mut pending, next);
        let n = bytes.len() as u64;
        if slots.recv().is_err() {
            return;
        }
        let piece = Piece { seq, offset, bytes, last, read };
        if tx.send(Work::Piece(piece, None)).is_err() {
            return;
        }
        offset += n;
        seq += 1;
        if last {
            return;
        }
    }
}

/// Just after the last `}` of `b` that is followed by `,` and `{` (whitespace between them allowed).
fn cut_point(b: &[u8]) -> Option<usize> {
    let mut end = b.len();
    while let Some(k) = memchr::memrchr(b',', &b[..end]) {
        end = k;
        let after = b[k + 1..].iter().position(|&c| !crate::json::is_ws(c));
        let before = b[..k].iter().rposition(|&c| !crate::json::is_ws(c));
        if let (Some(a), Some(p)) = (after, before) {
            if b[k + 1 + a] == b'{' && b[p] == b'}' {
                return Some(p + 1);
            }
        }
    }
    None
}

/// Finds the `[` that opens the events array: the document's first byte for a bare array, else
/// the value of the top-level key `traceEvents` (the Python reader has read the head before it
/// and knows it to be JSON; a key spelled with escapes is not found, and that reader takes over).
struct Head {
    array: bool,
    depth: i64,
    in_string: bool,
    escape: bool,
    /// the text of the string being read at depth 1 (up to 16 bytes), and whether it is longer
    text: Vec<u8>,
    long: bool,
    /// a string just ended at depth 1 (a key, if a `:` follows)
    after_string: bool,
    /// the key whose value comes next is traceEvents
    events_key: bool,
    /// arrays to pass over (the walk goes on through them, as through any other value)
    skip: usize,
}

impl Head {
    fn new(array: bool, skip: usize) -> Head {
        Head {
            skip,
            array,
            depth: 0,
            in_string: false,
            escape: false,
            text: vec![],
            long: false,
            after_string: false,
            events_key: false,
        }
    }

    /// Feed the next bytes; the offset just past the array's `[` once found.
    fn feed(&mut self, b: &[u8]) -> Option<usize> {
        for (i, &c) in b.iter().enumerate() {
            if self.in_string {
                if self.escape {
                    self.escape = false;
                } else if c == b'\\' {
                    self.escape = true;
                    self.long = true; // an escaped key is left to the Python reader
                } else if c == b'"' {
                    self.in_string = false;
                    self.after_string = self.depth == 1;
                    continue;
                }
                if self.depth == 1 {
                    if self.text.len() < 16 {
                        self.text.push(c);
                    } else {
                        self.long = true;
                    }
                }
                continue;
            }
            if crate::json::is_ws(c) {
                continue;
            }
            if self.array {
                return if c == b'[' { Some(i + 1) } else { None };
            }
            if self.events_key {
                self.events_key = false;
                if c == b'[' && self.depth == 1 {
                    if self.skip == 0 {
                        return Some(i + 1);
                    }
                    self.skip -= 1;
                }
            }
            match c {
                b'"' => {
                    self.in_string = true;
                    self.text.clear();
                    self.long = false;
                }
                b':' if self.after_string => {
                    self.events_key = !self.long && self.text == b"traceEvents";
                }
                b'{' | b'[' => self.depth += 1,
                b'}' | b']' => self.depth -= 1,
                _ => {}
            }
            self.after_string = false;
        }
        None
    }
}
