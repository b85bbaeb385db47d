//! Kineto events into columns, with the Python reader's rules (read/batch.py): a field lands in
//! its typed column only when its JSON value has that column's type exactly; anything else is
//! kept as JSON text, in `args` (promoted keys of `args`) or `extra` (event keys), in the order
//! that reader writes them: the values that did not fit first, then the other keys, then (in
//! `args`) the promoted keys whose value is null, each group in the event's own key order.
//!
//! An event whose result would depend on Python's own conversions (see json.rs, and the
//! `odd` cases below: escaped or duplicate keys, nulls or booleans inside shape lists, a
//! string where a list of strings is expected, `args` that is not an object) is not put in the
//! columns: its bytes are handed to the Python reader, so that its row is that reader's.

use std::sync::Arc;

use arrow_array::{ArrayRef, Int64Array};

use crate::columns::{nulls, zeros, Col, Kind, Room};
use crate::json::{Cursor, Fail, Limits, Str, R};

/// The core event fields: (key, column, kind of column).
#[derive(Clone, Copy, PartialEq)]
enum Core {
    Text(usize),
    Id(usize, usize),
    Time(usize),
}

pub const CORE_NAMES: [&str; 13] = [
    "ph",
    "cat_raw",
    "name",
    "pid",
    "tid",
    "pid_str",
    "tid_str",
    "ts_ns",
    "dur_ns",
    "flow_id",
    "flow_id_str",
    "bp",
    "scope",
];
const CORE_KINDS: [Kind; 13] = [
    Kind::Str,
    Kind::Str,
    Kind::Str,
    Kind::Int,
    Kind::Int,
    Kind::Str,
    Kind::Str,
    Kind::Int,
    Kind::Int,
    Kind::Int,
    Kind::Str,
    Kind::Str,
    Kind::Str,
];

fn core_field(key: &[u8]) -> Option<(u32, Core)> {
    // the bit is the key's place in the duplicate check
    Some(match key {
        b"ph" => (0, Core::Text(0)),
        b"cat" => (1, Core::Text(1)),
        b"name" => (2, Core::Text(2)),
        b"pid" => (3, Core::Id(3, 5)),
        b"tid" => (4, Core::Id(4, 6)),
        b"ts" => (5, Core::Time(7)),
        b"dur" => (6, Core::Time(8)),
        b"id" => (7, Core::Id(9, 10)),
        b"bp" => (8, Core::Text(11)),
        b"s" => (9, Core::Text(12)),
        _ => return None,
    })
}
const ARGS_BIT: u32 = 10;

/// The promoted keys of `args`, found by length, then by their first and last eight bytes as
/// two integers (which are the whole key up to 16 bytes: no memcmp call per key of an event).
pub struct Promoted {
    by_len: Vec<Vec<(Ends, Vec<u8>, usize)>>,
    pub names: Vec<String>,
    pub kinds: Vec<Kind>,
}

/// The first and the last eight bytes of a key (zero-padded when shorter).
type Ends = (u64, u64);

#[inline(always)]
fn ends(key: &[u8]) -> Ends {
    let n = key.len();
    if n >= 8 {
        let first = u64::from_le_bytes(key[..8].try_into().unwrap());
        let last = u64::from_le_bytes(key[n - 8..].try_into().unwrap());
        (first, last)
    } else {
        let mut b = [0u8; 8];
        b[..n].copy_from_slice(key);
        (u64::from_le_bytes(b), 0)
    }
}

impl Promoted {
    pub fn new(spec: &[(String, String, String)]) -> Result<Promoted, String> {
        let mut by_len: Vec<Vec<(Ends, Vec<u8>, usize)>> = vec![];
        let (mut names, mut kinds) = (vec![], vec![]);
        for (i, (key, col, kind)) in spec.iter().enumerate() {
            let k = Kind::parse(kind).ok_or_else(|| format!("unknown column kind {kind:?}"))?;
            if by_len.len() <= key.len() {
                by_len.resize(key.len() + 1, vec![]);
            }
            by_len[key.len()].push((ends(key.as_bytes()), key.as_bytes().to_vec(), i));
            names.push(col.clone());
            kinds.push(k);
        }
        if kinds.len() > 128 {
            return Err("more than 128 promoted keys".into());
        }
        Ok(Promoted { by_len, names, kinds })
    }

    #[inline]
    fn find(&self, key: &[u8]) -> Option<usize> {
        let e = ends(key);
        self.by_len
            .get(key.len())?
            .iter()
            .find(|(ke, k, _)| *ke == e && (key.len() <= 16 || k[8..] == key[8..]))
            .map(|&(_, _, i)| i)
    }
}

/// The rows read from one piece of the events array.
pub struct Batch {
    core: Vec<Col>,
    promo: Vec<Col>,
    args: Col,
    extra: Col,
    /// the place in the piece (0-based, counting every event) of each row
    pub local: Vec<u32>,
    /// events left to the Python reader: (place in the piece, their bytes)
    pub odd: Vec<(u32, Vec<u8>)>,
    pub rows: u32,
    // scratch, reused from event to event
    spill: Vec<u8>,
    plain: Vec<u8>,
    nulls: Vec<u8>,
    core_spill: Vec<u8>,
    others: Vec<u8>,
    keys: Vec<(usize, usize)>,
    akeys: Vec<(usize, usize)>,
    text: Vec<u8>,
    ints: Vec<i64>,
    inner: Vec<u32>,
}

impl Batch {
    /// An empty batch with room for what `room` says the piece before held (nothing if empty):
    /// pieces are alike, and columns grown from nothing are copied at every doubling.
    pub fn new(p: &Promoted, room: &[Room]) -> Batch {
        let kinds = CORE_KINDS.iter().chain(&p.kinds).chain(&[Kind::Str, Kind::Str]);
        let mut cols: Vec<Col> =
            kinds.enumerate().map(|(i, &k)| Col::with_room(k, room.get(i).copied().unwrap_or_default())).collect();
        let extra = cols.pop().expect("the extra column");
        let args = cols.pop().expect("the args column");
        let promo = cols.split_off(CORE_KINDS.len());
        Batch {
            core: cols,
            promo,
            args,
            extra,
            local: vec![],
            odd: vec![],
            rows: 0,
            spill: vec![],
            plain: vec![],
            nulls: vec![],
            core_spill: vec![],
            others: vec![],
            keys: vec![],
            akeys: vec![],
            text: vec![],
            ints: vec![],
            inner: vec![],
        }
    }

    /// The items each buffer of each column holds, for `Batch::new`.
    pub fn room(&self) -> Vec<Room> {
        self.core.iter().chain(&self.promo).chain([&self.args, &self.extra]).map(Col::room).collect()
    }

    /// Every event read (rows and odd ones).
    pub fn events(&self) -> usize {
        self.local.len() + self.odd.len()
    }

    fn truncate(&mut self, row: u32) {
        for c in self.core.iter_mut().chain(self.promo.iter_mut()) {
            c.truncate(row);
        }
        self.args.truncate(row);
        self.extra.truncate(row);
    }

    /// The rows as Arrow columns, every column of the schema in its order (the uid column is
    /// the caller's, once it knows where the piece starts; a column no row fills is all null),
    /// with each row's place in the piece and the odd events.
    pub fn finish(self, p: &Promoted) -> Finished {
        let n = self.rows as usize;
        let zeros = zeros(n);
        let names = CORE_NAMES.iter().copied().chain(p.names.iter().map(String::as_str)).chain(["args", "extra"]);
        let cols = self.core.into_iter().chain(self.promo).chain([self.args, self.extra]);
        let columns = names
            .zip(cols)
            .map(|(name, col)| {
                let kind = col.kind();
                (name.to_string(), col.finish(n).unwrap_or_else(|| nulls(kind, n, &zeros)))
            })
            .collect();
        Finished { columns, local: self.local, odd: self.odd }
    }
}

/// Named Arrow columns.
pub type Columns = Vec<(String, ArrayRef)>;
/// Events left to the Python reader: (uid or place, their bytes).
pub type OddEvents<T> = Vec<(T, Vec<u8>)>;

pub struct Finished {
    pub columns: Vec<(String, ArrayRef)>,
    pub local: Vec<u32>,
    pub odd: Vec<(u32, Vec<u8>)>,
}

impl Finished {
    pub fn events(&self) -> usize {
        self.local.len() + self.odd.len()
    }

    /// The columns with the uid column first: `uid0` + each row's place.
    pub fn with_uids(self, uid0: i64) -> (Columns, OddEvents<i64>) {
        let uids: Vec<i64> = self.local.iter().map(|&l| uid0 + l as i64).collect();
        let mut columns: Vec<(String, ArrayRef)> = vec![("uid".into(), Arc::new(Int64Array::from(uids)))];
        columns.extend(self.columns);
        let odd = self.odd.into_iter().map(|(place, b)| (uid0 + place as i64, b)).collect();
        (columns, odd)
    }
}

/// Where a piece parse stands between events.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum State {
    /// just after the array's `[`: an event or `]` comes next
    First,
    /// after an event: `,` or `]`
    After,
    /// after a `,`: an event
    Comma,
}

pub struct Parsed {
    pub state: State,
    /// bytes taken: up to the end of the last whole event (or separator) read
    pub consumed: usize,
    /// the array's `]` was found at this offset of the piece
    pub end: Option<usize>,
    pub error: Option<Fail>,
}

/// Read the events of `buf`, which starts in `state`, into `batch`.
pub fn parse_piece(buf: &[u8], mut state: State, batch: &mut Batch, p: &Promoted, limits: Limits) -> Parsed {
    let mut c = Cursor::new(buf, limits);
    let mut consumed = 0;
    loop {
        c.ws();
        if c.i >= buf.len() {
            return Parsed { state, consumed: c.i, end: None, error: None };
        }
        let ch = buf[c.i];
        match state {
            State::First | State::After if ch == b']' => {
                return Parsed { state, consumed: c.i + 1, end: Some(c.i), error: None };
            }
            State::After => {
                if ch != b',' {
                    let e = Fail::Syntax(c.i, "',' or ']' after an event");
                    return Parsed { state, consumed, end: None, error: Some(e) };
                }
                c.i += 1;
                state = State::Comma;
                consumed = c.i;
            }
            State::First | State::Comma => {
                let start = c.i;
                let place = batch.events() as u32;
                match event(&mut c, batch, p, place) {
                    Ok(()) => {
                        state = State::After;
                        consumed = c.i;
                    }
                    Err(Fail::Incomplete) => return Parsed { state, consumed: start, end: None, error: None },
                    Err(e) => return Parsed { state, consumed: start, end: None, error: Some(e) },
                }
            }
        }
    }
}

/// One event, the cursor on its first byte.
fn event(c: &mut Cursor, b: &mut Batch, p: &Promoted, place: u32) -> R<()> {
    let start = c.i;
    let row = b.rows;
    let mut odd = false;
    let r = fields(c, b, p, row, &mut odd);
    if let Err(e) = r {
        b.truncate(row);
        return Err(e);
    }
    if odd {
        b.truncate(row);
        b.odd.push((place, c.b[start..c.i].to_vec()));
    } else {
        b.local.push(place);
        b.rows += 1;
    }
    Ok(())
}

fn fields(c: &mut Cursor, b: &mut Batch, p: &Promoted, row: u32, odd: &mut bool) -> R<()> {
    if c.b[c.i] != b'{' {
        return Err(Fail::Syntax(c.i, "an event object"));
    }
    c.i += 1;
    b.core_spill.clear();
    b.others.clear();
    b.keys.clear();
    let mut seen: u32 = 0;
    let mut args_text: Option<bool> = None; // Some(empty object) once args is read
    if c.peek()? == b'}' {
        c.i += 1;
        return Ok(());
    }
    loop {
        if c.peek()? != b'"' {
            return Err(Fail::Syntax(c.i, "a string key"));
        }
        let k = c.string()?;
        if k.escaped {
            *odd = true;
        }
        c.expect(b':', "':' after a key")?;
        let key = &c.b[k.start..k.end];
        if let Some((bit, core)) = core_field(key) {
            if seen & (1 << bit) != 0 {
                *odd = true;
            }
            seen |= 1 << bit;
            core_value(c, b, core, k, row, odd)?;
        } else if key == b"args" {
            if seen & (1 << ARGS_BIT) != 0 {
                *odd = true;
            }
            seen |= 1 << ARGS_BIT;
            if c.peek()? == b'{' {
                args_text = Some(args(c, b, p, row, odd)?);
            } else {
                *odd = true; // not an object: where it lands depends on the batch in Python
                let mut sink = std::mem::take(&mut b.text);
                sink.clear();
                c.value(&mut sink, odd, 1)?;
                b.text = sink;
            }
        } else {
            if b.keys.iter().any(|&(s, e)| &c.b[s..e] == key) {
                *odd = true;
            }
            b.keys.push((k.start, k.end));
            let mut out = std::mem::take(&mut b.others);
            entry(c, k, &mut out, odd)?;
            b.others = out;
        }
        match c.peek()? {
            b',' => c.i += 1,
            b'}' => {
                c.i += 1;
                break;
            }
            _ => return Err(Fail::Syntax(c.i, "',' or '}' in an event")),
        }
    }
    if *odd {
        return Ok(());
    }
    if let Some(empty) = args_text {
        if !(b.spill.is_empty() && b.plain.is_empty() && b.nulls.is_empty()) || empty {
            let data = b.args.str_data();
            data.push(b'{');
            join(data, &[&b.spill, &b.plain, &b.nulls]);
            data.push(b'}');
            b.args.end_str(row);
        }
    }
    if !(b.core_spill.is_empty() && b.others.is_empty()) {
        let data = b.extra.str_data();
        data.push(b'{');
        join(data, &[&b.core_spill, &b.others]);
        data.push(b'}');
        b.extra.end_str(row);
    }
    Ok(())
}

/// The entries of `parts` (each a comma-separated list, maybe empty), joined by commas.
fn join(out: &mut Vec<u8>, parts: &[&Vec<u8>]) {
    let mut first = true;
    for part in parts {
        if part.is_empty() {
            continue;
        }
        if !first {
            out.push(b',');
        }
        out.extend_from_slice(part);
        first = false;
    }
}

/// `"key":value` appended to the comma-separated list `out`.
fn entry(c: &mut Cursor, key: Str, out: &mut Vec<u8>, odd: &mut bool) -> R<()> {
    if !out.is_empty() {
        out.push(b',');
    }
    c.write_string(key, out, odd);
    out.push(b':');
    c.value(out, odd, 1)
}

fn core_value(c: &mut Cursor, b: &mut Batch, core: Core, key: Str, row: u32, odd: &mut bool) -> R<()> {
    let at = c.i;
    let first = c.peek()?;
    if first == b'n' {
        return c.literal(b"null"); // a null field is a null in its column, as in Python
    }
    match core {
        Core::Text(col) if first == b'"' => {
            let s = c.string()?;
            let data = b.core[col].str_data();
            let len = data.len();
            if !c.decode(s, data) {
                data.truncate(len);
                *odd = true;
            }
            b.core[col].end_str(row);
            return Ok(());
        }
        Core::Id(num, text) if first == b'"' => {
            let s = c.string()?;
            let data = b.core[text].str_data();
            let len = data.len();
            if !c.decode(s, data) {
                data.truncate(len);
                *odd = true;
            }
            if let Some(v) = canonical_int(&data[len..]) {
                b.core[num].push_i64(row, v);
            }
            b.core[text].end_str(row);
            return Ok(());
        }
        Core::Id(num, _) if first == b'-' || first.is_ascii_digit() => {
            if let Some(v) = c.number()?.int64() {
                b.core[num].push_i64(row, v);
                return Ok(());
            }
        }
        Core::Time(col) if first == b'-' || first.is_ascii_digit() => {
            let n = c.number()?;
            if let Some(v) = n.scaled(&c.b[n.start..n.end], 3).and_then(|v| i64::try_from(v).ok()) {
                b.core[col].push_i64(row, v);
                return Ok(());
            }
        }
        _ => {}
    }
    // not of the column's type: kept in `extra`
    c.i = at;
    let mut out = std::mem::take(&mut b.core_spill);
    let r = entry(c, key, &mut out, odd);
    b.core_spill = out;
    r
}

/// The text of an id written as a string is also its integer where it is a decimal as int()
/// writes one, below 19 digits (the Python reader's rule).
fn canonical_int(t: &[u8]) -> Option<i64> {
    if t.is_empty() || t.len() > 18 || !t.iter().all(u8::is_ascii_digit) || (t[0] == b'0' && t.len() > 1) {
        return None;
    }
    std::str::from_utf8(t).ok()?.parse().ok()
}

/// The `args` object, the cursor on its `{`; returns whether it is empty.
fn args(c: &mut Cursor, b: &mut Batch, p: &Promoted, row: u32, odd: &mut bool) -> R<bool> {
    c.i += 1;
    b.spill.clear();
    b.plain.clear();
    b.nulls.clear();
    let mut seen: u128 = 0;
    b.akeys.clear();
    if c.peek()? == b'}' {
        c.i += 1;
        return Ok(true);
    }
    loop {
        if c.peek()? != b'"' {
            return Err(Fail::Syntax(c.i, "a string key"));
        }
        let k = c.string()?;
        if k.escaped {
            *odd = true;
        }
        c.expect(b':', "':' after a key")?;
        let key = &c.b[k.start..k.end];
        match p.find(key) {
            Some(i) => {
                if seen & (1 << i) != 0 {
                    *odd = true;
                }
                seen |= 1 << i;
                promoted(c, b, p.kinds[i], i, k, row, odd)?;
            }
            None => {
                if b.akeys.iter().any(|&(s, e)| &c.b[s..e] == key) {
                    *odd = true;
                }
                b.akeys.push((k.start, k.end));
                let mut out = std::mem::take(&mut b.plain);
                let r = entry(c, k, &mut out, odd);
                b.plain = out;
                r?;
            }
        }
        match c.peek()? {
            b',' => c.i += 1,
            b'}' => {
                c.i += 1;
                return Ok(false);
            }
            _ => return Err(Fail::Syntax(c.i, "',' or '}' in args")),
        }
    }
}

/// How a promoted value came out.
enum Fit {
    /// stored in its column
    Yes,
    /// not of the column's type: kept in `args`
    No,
    /// Python's two conversions of it disagree: the event is odd
    Unsure,
}

#[allow(clippy::too_many_arguments)]
fn promoted(c: &mut Cursor, b: &mut Batch, kind: Kind, col: usize, key: Str, row: u32, odd: &mut bool) -> R<()> {
    let at = c.i;
    let first = c.peek()?;
    if first == b'n' {
        c.literal(b"null")?;
        let mut out = std::mem::take(&mut b.nulls);
        if !out.is_empty() {
            out.push(b',');
        }
        c.write_string(key, &mut out, odd);
        out.extend_from_slice(b":null");
        b.nulls = out;
        return Ok(());
    }
    let fit = match kind {
        Kind::Int => match first {
            b'-' | b'0'..=b'9' => match c.number()?.int64() {
                Some(v) => {
                    b.promo[col].push_i64(row, v);
                    Fit::Yes
                }
                None => Fit::No,
            },
            _ => Fit::No,
        },
        Kind::Float => match first {
            b'-' | b'0'..=b'9' => {
                let n = c.number()?;
                // decimal128(38, 18): at most 18 digits after the point, 20 before
                match n.scaled(&c.b[n.start..n.end], 18).filter(|v| v.unsigned_abs() < 10u128.pow(38)) {
                    Some(v) => {
                        b.promo[col].push_dec(row, v);
                        Fit::Yes
                    }
                    None => Fit::No,
                }
            }
            _ => Fit::No,
        },
        Kind::Str => match first {
            b'"' => {
                let s = c.string()?;
                let data = b.promo[col].str_data();
                let len = data.len();
                if c.decode(s, data) {
                    b.promo[col].end_str(row);
                    Fit::Yes
                } else {
                    data.truncate(len);
                    Fit::Unsure
                }
            }
            _ => Fit::No,
        },
        Kind::StrList => match first {
            b'[' => str_list(c, b, col, row)?,
            b'"' => Fit::Unsure, // pyarrow's fast path splits a string into its characters
            _ => Fit::No,
        },
        Kind::IntList => match first {
            b'[' => {
                let mut ints = std::mem::take(&mut b.ints);
                ints.clear();
                let f = int_list(c, &mut ints)?;
                if let Fit::Yes = f {
                    if let Col::IntList { rows, ends, items } = &mut b.promo[col] {
                        items.extend_from_slice(&ints);
                        rows.push(row);
                        ends.push(items.len() as u32);
                    }
                }
                b.ints = ints;
                f
            }
            b'"' => Fit::Unsure, // pyarrow's fast path reads "" as an empty list
            _ => Fit::No,
        },
        Kind::Dims => match first {
            b'[' => dims(c, b, col, row)?,
            b'"' => Fit::Unsure,
            _ => Fit::No,
        },
    };
    match fit {
        Fit::Yes => Ok(()),
        Fit::Unsure => {
            *odd = true;
            c.i = at;
            c.value(&mut Vec::new(), odd, 1)
        }
        Fit::No => {
            c.i = at;
            let mut out = std::mem::take(&mut b.spill);
            let r = entry(c, key, &mut out, odd);
            b.spill = out;
            r
        }
    }
}

/// A list of strings, the cursor on `[`.
fn str_list(c: &mut Cursor, b: &mut Batch, col: usize, row: u32) -> R<Fit> {
    c.i += 1;
    let mut text = std::mem::take(&mut b.text);
    text.clear();
    let mut ends: Vec<u32> = vec![];
    let mut fit = Fit::Yes;
    if c.peek()? == b']' {
        c.i += 1;
    } else {
        loop {
            match c.peek()? {
                b'"' => {
                    let s = c.string()?;
                    if !c.decode(s, &mut text) {
                        fit = Fit::Unsure;
                    }
                    ends.push(text.len() as u32);
                }
                b'n' => {
                    fit = Fit::Unsure; // pyarrow's fast path takes a null item, its slow path does not
                    break;
                }
                _ => {
                    if let Fit::Yes = fit {
                        fit = Fit::No;
                    }
                    break;
                }
            }
            match c.peek()? {
                b',' => c.i += 1,
                b']' => {
                    c.i += 1;
                    break;
                }
                _ => return Err(Fail::Syntax(c.i, "',' or ']' in an array")),
            }
        }
    }
    if let Fit::Yes = fit {
        if let Col::StrList { rows, ends: rends, item_ends, data } = &mut b.promo[col] {
            let base = data.len() as u32;
            data.extend_from_slice(&text);
            item_ends.extend(ends.iter().map(|e| base + e));
            rows.push(row);
            rends.push(item_ends.len() as u32);
        }
    }
    b.text = text;
    Ok(fit)
}

/// A list of integers a float64 holds exactly, the cursor on `[`, into `ints`.
fn int_list(c: &mut Cursor, ints: &mut Vec<i64>) -> R<Fit> {
    c.i += 1;
    if c.peek()? == b']' {
        c.i += 1;
        return Ok(Fit::Yes);
    }
    loop {
        match c.peek()? {
            b'-' | b'0'..=b'9' => match c.number()?.int64().filter(|v| v.unsigned_abs() <= 1 << 53) {
                Some(v) => ints.push(v),
                None => return Ok(Fit::No),
            },
            // float64's fast path takes null, true and false (as 1.0/0.0); the slow path none of them
            b'n' | b't' | b'f' => return Ok(Fit::Unsure),
            _ => return Ok(Fit::No),
        }
        match c.peek()? {
            b',' => c.i += 1,
            b']' => {
                c.i += 1;
                return Ok(Fit::Yes);
            }
            _ => return Err(Fail::Syntax(c.i, "',' or ']' in an array")),
        }
    }
}

/// A list of shapes (lists of integers), the cursor on `[`.
fn dims(c: &mut Cursor, b: &mut Batch, col: usize, row: u32) -> R<Fit> {
    c.i += 1;
    let mut ints = std::mem::take(&mut b.ints);
    let mut inner = std::mem::take(&mut b.inner);
    ints.clear();
    inner.clear();
    let mut fit = Fit::Yes;
    if c.peek()? == b']' {
        c.i += 1;
    } else {
        loop {
            match c.peek()? {
                b'[' => {
                    let f = int_list(c, &mut ints)?;
                    if !matches!(f, Fit::Yes) {
                        fit = f;
                        break;
                    }
                    inner.push(ints.len() as u32);
                }
                // a null, or a string (pyarrow's fast path reads "" as an empty shape)
                b'n' | b'"' => {
                    fit = Fit::Unsure;
                    break;
                }
                _ => {
                    fit = Fit::No;
                    break;
                }
            }
            match c.peek()? {
                b',' => c.i += 1,
                b']' => {
                    c.i += 1;
                    break;
                }
                _ => return Err(Fail::Syntax(c.i, "',' or ']' in an array")),
            }
        }
    }
    if let Fit::Yes = fit {
        if let Col::Dims { rows, ends, inner: rinner, items } = &mut b.promo[col] {
            let base = items.len() as u32;
            items.extend_from_slice(&ints);
            rinner.extend(inner.iter().map(|e| base + e));
            rows.push(row);
            ends.push(rinner.len() as u32);
        }
    }
    b.ints = ints;
    b.inner = inner;
    Ok(fit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_promoted_key_is_found_by_its_whole_text_whatever_its_length() {
        let keys =
            ["s", "Ev Idx", "External", "External id", "0123456789abcdef", "0123456789abcdefXYZ", "0123XYZ89abcdefXYZ"];
        let spec: Vec<(String, String, String)> =
            keys.iter().enumerate().map(|(i, k)| (k.to_string(), format!("c{i}"), "int".to_string())).collect();
        let p = Promoted::new(&spec).unwrap();
        for (i, k) in keys.iter().enumerate() {
            assert_eq!(p.find(k.as_bytes()), Some(i), "{k}");
        }
        // same length, same first and last eight bytes, another middle; a prefix; a longer key
        for k in ["0123456789abXdefXYZ", "0123XYZ89abXdefXYZ", "External i", "External idd", "", "t", "Ev Id\0"] {
            assert_eq!(p.find(k.as_bytes()), None, "{k:?}");
        }
    }
}
