//! The JSON grammar, one value at a time, over a byte slice that may end anywhere.
//!
//! Reading past the end of the slice is `Fail::Incomplete` (the caller holds more bytes, or the
//! document was cut short); anything the grammar forbids is `Fail::Syntax` at the byte where it
//! shows. Values are copied out in the compact form the Python reader writes them (its
//! `jsontext.dumps`: no spaces, strings with only `"`, `\` and control characters escaped,
//! numbers as written); a value that form cannot be known for without Python's own number
//! formatting (an exponent, a decimal Python prints in scientific notation) or string handling
//! (a lone surrogate, bytes that are not UTF-8) marks the event `odd`: the Python reader takes it.

#[derive(Debug, Clone, PartialEq)]
pub enum Fail {
    /// the slice ended inside a value
    Incomplete,
    /// at this offset of the slice, not JSON; what was expected
    Syntax(usize, &'static str),
    /// nested deeper than the bound, at this offset
    Deep(usize),
}

pub type R<T> = Result<T, Fail>;

/// A number token: its kind, its span, and its digits as one integer where they fit a u64 (the
/// value is then `mant` / 10^`frac`, with the sign).
#[derive(Debug, Clone, Copy)]
pub struct NumTok {
    pub kind: Num,
    pub start: usize,
    pub end: usize,
    pub neg: bool,
    pub mant: Option<u64>,
    pub frac: u32,
}

impl NumTok {
    /// Its value if it is an integer token in i64 range (`-0` is 0).
    #[inline]
    pub fn int64(&self) -> Option<i64> {
        if self.kind != Num::Int {
            return None;
        }
        let m = self.mant?;
        if !self.neg {
            i64::try_from(m).ok()
        } else if m <= 1 << 63 {
            Some((m as i64).wrapping_neg())
        } else {
            None
        }
    }

    /// Its value in units of 10^-`scale`, exactly, where it is one (see `scaled`).
    #[inline]
    pub fn scaled(&self, text: &[u8], scale: u32) -> Option<i128> {
        if let (Some(m), true) = (self.mant, self.frac <= scale && self.kind != Num::Exp) {
            let v = match POW10.get((scale - self.frac) as usize) {
                // two factors below 2^64: the product fits a u128
                Some(&p) => i128::try_from(m as u128 * p as u128).ok()?,
                None => (m as i128).checked_mul(10i128.checked_pow(scale - self.frac)?)?,
            };
            return Some(if self.neg { -v } else { v });
        }
        scaled(text, self.kind, scale)
    }
}

/// 10^k for the k a u64 holds.
const POW10: [u64; 20] = {
    let mut t = [1u64; 20];
    let mut k = 1;
    while k < 20 {
        t[k] = t[k - 1] * 10;
        k += 1;
    }
    t
};

/// What kind of number a number token is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Num {
    /// digits only (with a sign): an integer of any size
    Int,
    /// a fraction and no exponent
    Frac,
    /// an exponent: exact only through Python's Decimal
    Exp,
}

/// Bounds on what one value may be.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// nesting levels
    pub depth: usize,
    /// digits in one run of a number (Python's int() refuses longer ones: the Python reader stops there)
    pub digits: usize,
}

pub struct Cursor<'a> {
    pub b: &'a [u8],
    pub i: usize,
    pub limits: Limits,
}

#[inline]
pub fn is_ws(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\r')
}

const LO: u64 = 0x0101_0101_0101_0101;
const HI: u64 = 0x8080_8080_8080_8080;

/// From `i`, eight bytes at a time while eight are left: (the position of the first quote,
/// backslash or control byte, true), or (that of the first byte not tested, false); `seen` ORed
/// with the bytes passed.
#[inline(always)]
fn scan8(b: &[u8], mut i: usize, seen: &mut u64) -> (usize, bool) {
    while let Some(w) = b.get(i..i + 8) {
        let x = u64::from_le_bytes(w.try_into().unwrap());
        let m = special8(x);
        if m != 0 {
            let k = m.trailing_zeros() / 8;
            *seen |= x & ((1u64 << (8 * k)) - 1);
            return (i + k as usize, true);
        }
        *seen |= x;
        i += 8;
    }
    (i, false)
}

/// The bytes of `x` that are `"`, `\` or below 0x20 (the bytes that end a plain run of a string),
/// as the high bit of each; the lowest one set is exact (the borrows of the tests only reach up).
#[inline]
fn special8(x: u64) -> u64 {
    let quote = x ^ (LO * b'"' as u64);
    let bslash = x ^ (LO * b'\\' as u64);
    let has_zero = |v: u64| v.wrapping_sub(LO) & !v & HI;
    let below = x.wrapping_sub(LO * 0x20) & !x & HI;
    has_zero(quote) | has_zero(bslash) | below
}

/// A string's content: `start..end` of the slice (without the quotes); `escaped` when it holds a `\`.
#[derive(Clone, Copy, Debug)]
pub struct Str {
    pub start: usize,
    pub end: usize,
    pub escaped: bool,
    /// every byte is below 0x80 (no UTF-8 check needed)
    pub ascii: bool,
}

impl<'a> Cursor<'a> {
    pub fn new(b: &'a [u8], limits: Limits) -> Self {
        Cursor { b, i: 0, limits }
    }

    #[inline]
    pub fn ws(&mut self) {
        match self.b.get(self.i) {
            Some(&c) if is_ws(c) => self.ws_run(),
            _ => {}
        }
    }

    /// A run of whitespace (indentation is a third of a pretty-printed trace): 8 bytes at a time.
    fn ws_run(&mut self) {
        let b = self.b;
        let mut i = self.i + 1;
        while i + 8 <= b.len() {
            let x = u64::from_le_bytes(b[i..i + 8].try_into().unwrap());
            let spaces = x ^ (LO * b' ' as u64);
            if spaces == 0 {
                i += 8;
                continue;
            }
            // the first byte that is not a space: whitespace if it is a tab, newline or return
            let k = (spaces.trailing_zeros() / 8) as usize;
            i += k;
            if !is_ws(b[i]) {
                self.i = i;
                return;
            }
            i += 1;
        }
        while i < b.len() && is_ws(b[i]) {
            i += 1;
        }
        self.i = i;
    }

    /// The next byte that is not whitespace (not consumed).
    #[inline]
    pub fn peek(&mut self) -> R<u8> {
        self.ws();
        self.b.get(self.i).copied().ok_or(Fail::Incomplete)
    }

    #[inline]
    pub fn expect(&mut self, c: u8, what: &'static str) -> R<()> {
        if self.peek()? != c {
            return Err(Fail::Syntax(self.i, what));
        }
        self.i += 1;
        Ok(())
    }

    /// A string, the cursor on its opening quote. Raw control characters are refused, as JSON does;
    /// escapes are checked for form here and decoded by `decode`.
    #[inline]
    pub fn string(&mut self) -> R<Str> {
        debug_assert_eq!(self.b[self.i], b'"');
        let b = self.b;
        let start = self.i + 1;
        // the bytes passed, ORed: their high bits say whether the string is ASCII
        let mut seen = 0u64;
        // the common case, a string with no escape: whole here, the rest in `string_rest`
        let (i, found) = scan8(b, start, &mut seen);
        if found && b[i] == b'"' {
            self.i = i + 1;
            return Ok(Str { start, end: i, escaped: false, ascii: seen & HI == 0 });
        }
        self.string_rest(start, i, seen)
    }

    /// The rest of a string from `i`, `seen` the bytes of it before `i` ORed.
    fn string_rest(&mut self, start: usize, mut i: usize, mut seen: u64) -> R<Str> {
        let b = self.b;
        let mut escaped = false;
        loop {
            i = scan8(b, i, &mut seen).0;
            let c = *b.get(i).ok_or(Fail::Incomplete)?;
            match c {
                b'"' => {
                    self.i = i + 1;
                    return Ok(Str { start, end: i, escaped, ascii: seen & HI == 0 });
                }
                b'\\' => {
                    escaped = true;
                    let e = *b.get(i + 1).ok_or(Fail::Incomplete)?;
                    match e {
                        b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => i += 2,
                        b'u' => {
                            if b.len() < i + 6 {
                                return Err(Fail::Incomplete);
                            }
                            if !b[i + 2..i + 6].iter().all(|h| h.is_ascii_hexdigit()) {
                                return Err(Fail::Syntax(i, "a \\u escape with four hex digits"));
                            }
                            i += 6;
                        }
                        _ => return Err(Fail::Syntax(i, "a valid escape in a string")),
                    }
                }
                c if c < 0x20 => return Err(Fail::Syntax(i, "no raw control character in a string")),
                c => {
                    seen |= c as u64;
                    i += 1;
                }
            }
        }
    }

    /// The text of a string as UTF-8, escapes decoded, into `out`; false (out unspecified) where
    /// it holds a lone surrogate or bytes that are not UTF-8: the Python reader decides those.
    #[inline]
    pub fn decode(&self, s: Str, out: &mut Vec<u8>) -> bool {
        if s.ascii && !s.escaped {
            out.extend_from_slice(&self.b[s.start..s.end]);
            return true;
        }
        self.decode_rest(s, out)
    }

    fn decode_rest(&self, s: Str, out: &mut Vec<u8>) -> bool {
        let raw = &self.b[s.start..s.end];
        if !s.ascii && std::str::from_utf8(raw).is_err() {
            return false;
        }
        if !s.escaped {
            out.extend_from_slice(raw);
            return true;
        }
        let mut i = 0;
        while i < raw.len() {
            let c = raw[i];
            if c != b'\\' {
                out.push(c);
                i += 1;
                continue;
            }
            let e = raw[i + 1];
            i += 2;
            let ch = match e {
                b'"' => b'"',
                b'\\' => b'\\',
                b'/' => b'/',
                b'b' => 8,
                b'f' => 12,
                b'n' => b'\n',
                b'r' => b'\r',
                b't' => b'\t',
                _ => {
                    let hi = hex4(&raw[i..i + 4]);
                    i += 4;
                    let cp = if (0xD800..0xDC00).contains(&hi) {
                        // a high surrogate must be followed by an escaped low one
                        if raw.len() >= i + 6 && raw[i] == b'\\' && raw[i + 1] == b'u' {
                            let lo = hex4(&raw[i + 2..i + 6]);
                            if !(0xDC00..0xE000).contains(&lo) {
                                return false;
                            }
                            i += 6;
                            0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00)
                        } else {
                            return false;
                        }
                    } else if (0xDC00..0xE000).contains(&hi) {
                        return false;
                    } else {
                        hi
                    };
                    let mut buf = [0u8; 4];
                    out.extend_from_slice(char::from_u32(cp).unwrap().encode_utf8(&mut buf).as_bytes());
                    continue;
                }
            };
            out.push(ch);
        }
        true
    }

    /// A number token, the cursor on its first byte.
    #[inline(always)]
    pub fn number(&mut self) -> R<NumTok> {
        let b = self.b;
        let start = self.i;
        let at = |i: usize| b.get(i).copied().ok_or(Fail::Incomplete);
        let neg = at(start)? == b'-';
        let int0 = start + neg as usize;
        // the digits before and after the point as one integer (exact up to 19 digits)
        let (mut i, mut m) = match at(int0)? {
            b'0' => (int0 + 1, 0),
            b'1'..=b'9' => digit_run(b, int0, 0),
            _ => return Err(Fail::Syntax(int0, "a digit")),
        };
        let int_digits = i - int0;
        let mut kind = Num::Int;
        let mut frac_digits = 0;
        let mut exp_digits = 0;
        if at(i)? == b'.' {
            i += 1;
            if !at(i)?.is_ascii_digit() {
                return Err(Fail::Syntax(i, "a digit after the decimal point"));
            }
            let (end, m2) = digit_run(b, i, m);
            frac_digits = end - i;
            (i, m) = (end, m2);
            kind = Num::Frac;
        }
        if matches!(at(i)?, b'e' | b'E') {
            i += 1;
            if matches!(at(i)?, b'+' | b'-') {
                i += 1;
            }
            if !at(i)?.is_ascii_digit() {
                return Err(Fail::Syntax(i, "a digit in the exponent"));
            }
            let end = digit_run(b, i, 0).0;
            exp_digits = end - i;
            i = end;
            at(i)?;
            kind = Num::Exp;
        }
        if self.limits.digits > 0 {
            // a short token is taken as all digits
            let run = if i - start <= 16 { i - start } else { int_digits.max(frac_digits).max(exp_digits) };
            if run > self.limits.digits {
                return Err(Fail::Syntax(start, "a number of fewer digits"));
            }
        }
        let mant = if int_digits + frac_digits <= 19 { Some(m) } else { checked_mant(&b[int0..i]) };
        let frac = u32::try_from(frac_digits).unwrap_or(u32::MAX);
        self.i = i;
        Ok(NumTok { kind, start, end: i, neg, mant, frac })
    }

    /// A literal (`true`, `false`, `null`), the cursor on its first byte.
    pub fn literal(&mut self, word: &'static [u8]) -> R<()> {
        let end = self.i + word.len();
        let have = &self.b[self.i..end.min(self.b.len())];
        if have != &word[..have.len()] {
            return Err(Fail::Syntax(self.i, "a JSON value"));
        }
        if end > self.b.len() {
            return Err(Fail::Incomplete);
        }
        self.i = end;
        Ok(())
    }

    /// Copy the value at the cursor to `out` in compact form; `odd` is set where Python's form
    /// of it cannot be known here (see the module's doc).
    pub fn value(&mut self, out: &mut Vec<u8>, odd: &mut bool, depth: usize) -> R<()> {
        let c = self.peek()?;
        match c {
            b'"' => {
                let s = self.string()?;
                self.write_string(s, out, odd);
            }
            b'{' => {
                if depth >= self.limits.depth {
                    return Err(Fail::Deep(self.i));
                }
                self.i += 1;
                out.push(b'{');
                let mut keys: Vec<(usize, usize, bool)> = Vec::new();
                if self.peek()? == b'}' {
                    self.i += 1;
                    out.push(b'}');
                    return Ok(());
                }
                loop {
                    if self.peek()? != b'"' {
                        return Err(Fail::Syntax(self.i, "a string key"));
                    }
                    let k = self.string()?;
                    let raw = &self.b[k.start..k.end];
                    // the last of duplicate keys wins in Python, at the first one's place
                    keys.push((k.start, k.end, k.escaped));
                    let escaped = keys.iter().any(|&(_, _, e)| e);
                    if keys[..keys.len() - 1].iter().any(|&(s, e, _)| &self.b[s..e] == raw) || escaped && keys.len() > 1
                    {
                        *odd = true;
                    }
                    self.write_string(k, out, odd);
                    self.expect(b':', "':' after a key")?;
                    out.push(b':');
                    self.value(out, odd, depth + 1)?;
                    match self.peek()? {
                        b',' => {
                            self.i += 1;
                            out.push(b',');
                        }
                        b'}' => {
                            self.i += 1;
                            out.push(b'}');
                            return Ok(());
                        }
                        _ => return Err(Fail::Syntax(self.i, "',' or '}' in an object")),
                    }
                }
            }
            b'[' => {
                if depth >= self.limits.depth {
                    return Err(Fail::Deep(self.i));
                }
                self.i += 1;
                out.push(b'[');
                if self.peek()? == b']' {
                    self.i += 1;
                    out.push(b']');
                    return Ok(());
                }
                loop {
                    self.value(out, odd, depth + 1)?;
                    match self.peek()? {
                        b',' => {
                            self.i += 1;
                            out.push(b',');
                        }
                        b']' => {
                            self.i += 1;
                            out.push(b']');
                            return Ok(());
                        }
                        _ => return Err(Fail::Syntax(self.i, "',' or ']' in an array")),
                    }
                }
            }
            b't' => {
                self.literal(b"true")?;
                out.extend_from_slice(b"true");
            }
            b'f' => {
                self.literal(b"false")?;
                out.extend_from_slice(b"false");
            }
            b'n' => {
                self.literal(b"null")?;
                out.extend_from_slice(b"null");
            }
            b'-' | b'0'..=b'9' => {
                let n = self.number()?;
                write_number(&self.b[n.start..n.end], n.kind, out, odd);
            }
            _ => return Err(Fail::Syntax(self.i, "a JSON value")),
        }
        Ok(())
    }

    /// A string as Python's JSON writer spells it (ensure_ascii off): decoded, then only `"`, `\`
    /// and control characters escaped.
    pub fn write_string(&self, s: Str, out: &mut Vec<u8>, odd: &mut bool) {
        out.push(b'"');
        let raw = &self.b[s.start..s.end];
        if !s.escaped && (s.ascii || std::str::from_utf8(raw).is_ok()) {
            out.extend_from_slice(raw); // no escape and no control character: as it is
        } else {
            let mut text = Vec::with_capacity(raw.len());
            if !self.decode(s, &mut text) {
                *odd = true;
            }
            escape_into(&text, out);
        }
        out.push(b'"');
    }
}

/// The end of the run of digits of `b` from `i`, and `m` followed by those digits as one integer
/// (modulo 2^64: exact while it fits).
#[inline]
fn digit_run(b: &[u8], mut i: usize, mut m: u64) -> (usize, u64) {
    const NIB: u64 = 0xF0F0_F0F0_F0F0_F0F0;
    while let Some(w) = b.get(i..i + 8) {
        let x = u64::from_le_bytes(w.try_into().unwrap());
        // a digit is 0x30..=0x39: its high nibble is 3, and still 3 once 6 is added (a carry out
        // of a byte that is no digit only reaches the bytes after it)
        if (x & NIB) | ((x.wrapping_add(LO * 6) & NIB) >> 4) != LO * 0x33 {
            break;
        }
        m = m.wrapping_mul(100_000_000).wrapping_add(eight_digits(x - LO * b'0' as u64));
        i += 8;
    }
    while let Some(&c) = b.get(i) {
        let d = c.wrapping_sub(b'0');
        if d > 9 {
            break;
        }
        m = m.wrapping_mul(10).wrapping_add(d as u64);
        i += 1;
    }
    (i, m)
}

/// The value of eight digits 0..=9, one a byte, the first in the lowest byte: pairs, then
/// quadruples, then the whole, each step within lanes twice as wide.
#[inline]
fn eight_digits(x: u64) -> u64 {
    let x = (x.wrapping_mul(10) + (x >> 8)) & 0x00FF_00FF_00FF_00FF;
    let x = (x.wrapping_mul(100) + (x >> 16)) & 0x0000_FFFF_0000_FFFF;
    (x.wrapping_mul(10_000) + (x >> 32)) & 0xFFFF_FFFF
}

/// The digits of a number's text (its sign left out) up to its exponent as one integer, where
/// it fits a u64.
fn checked_mant(t: &[u8]) -> Option<u64> {
    let mut m: u64 = 0;
    for &c in t.iter().take_while(|c| !matches!(c, b'e' | b'E')).filter(|&&c| c != b'.') {
        m = m.checked_mul(10)?.checked_add((c - b'0') as u64)?;
    }
    Some(m)
}

fn hex4(h: &[u8]) -> u32 {
    h.iter().fold(0, |a, &c| a * 16 + (c as char).to_digit(16).unwrap())
}

/// `text` escaped as Python's json module escapes it with ensure_ascii off.
pub fn escape_into(text: &[u8], out: &mut Vec<u8>) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    for &c in text {
        match c {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            8 => out.extend_from_slice(b"\\b"),
            12 => out.extend_from_slice(b"\\f"),
            c if c < 0x20 => {
                out.extend_from_slice(&[b'\\', b'u', b'0', b'0', HEX[(c >> 4) as usize], HEX[(c & 15) as usize]])
            }
            c => out.push(c),
        }
    }
}

/// A number as Python writes it back: an integer as int() prints it (`-0` is `0`), a decimal as
/// str(Decimal) prints it, which is its text unless it is far below one (`0.0000001` is `1E-7`).
pub fn write_number(t: &[u8], kind: Num, out: &mut Vec<u8>, odd: &mut bool) {
    match kind {
        Num::Int => {
            if t == b"-0" {
                out.push(b'0');
            } else {
                out.extend_from_slice(t);
            }
        }
        Num::Frac => {
            if plain_decimal(t) {
                out.extend_from_slice(t);
            } else {
                *odd = true;
                out.extend_from_slice(t);
            }
        }
        Num::Exp => {
            *odd = true;
            out.extend_from_slice(t);
        }
    }
}

/// Whether str(Decimal(t)) is `t` itself for a decimal with a fraction and no exponent: its
/// adjusted exponent (the place of its leading digit) is -6 or more.
fn plain_decimal(t: &[u8]) -> bool {
    let t = t.strip_prefix(b"-").unwrap_or(t);
    let dot = t.iter().position(|&c| c == b'.').unwrap();
    let frac = t.len() - dot - 1;
    let digits: Vec<u8> = t.iter().copied().filter(|&c| c != b'.').collect();
    let significant = digits.iter().position(|&c| c != b'0').map_or(1, |p| digits.len() - p);
    (significant as i64 - 1) - (frac as i64) >= -6
}

/// The value of a JSON number in units of 10^-`scale`, exactly, if it is one in i128 range
/// (an integer or a decimal whose fraction has at most `scale` digits after trailing zeros).
pub fn scaled(t: &[u8], kind: Num, scale: u32) -> Option<i128> {
    if kind == Num::Exp {
        return None;
    }
    let (neg, t) = match t.strip_prefix(b"-") {
        Some(r) => (true, r),
        None => (false, t),
    };
    let (int, frac) = match t.iter().position(|&c| c == b'.') {
        Some(d) => (&t[..d], &t[d + 1..]),
        None => (t, &t[..0]),
    };
    let mut frac = frac;
    while let [rest @ .., b'0'] = frac {
        frac = rest;
    }
    if frac.len() > scale as usize || int.len() > 36 {
        return None;
    }
    let mut v: i128 = 0;
    for &c in int.iter().chain(frac.iter()) {
        v = v.checked_mul(10)?.checked_add((c - b'0') as i128)?;
    }
    v = v.checked_mul(10i128.checked_pow(scale - frac.len() as u32)?)?;
    Some(if neg { -v } else { v })
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMITS: Limits = Limits { depth: 900, digits: 4300 };

    fn compact(s: &str) -> (String, bool) {
        let mut c = Cursor::new(s.as_bytes(), LIMITS);
        let mut out = Vec::new();
        let mut odd = false;
        c.value(&mut out, &mut odd, 0).unwrap();
        (String::from_utf8(out).unwrap(), odd)
    }

    #[test]
    fn compact_form_is_pythons() {
        assert_eq!(compact(r#"{ "a" : [1, -0, 1.50, "x\/y\u00e9"] }"#), (r#"{"a":[1,0,1.50,"x/yé"]}"#.into(), false));
        assert_eq!(compact(r#""\u0001\t""#), (r#""\u0001\t""#.into(), false));
        assert!(compact("[0.0000001]").1);
        assert!(!compact("[0.000001]").1);
        assert!(compact("[0.00000000]").1);
        assert!(compact("[1e5]").1);
        assert!(compact(r#"{"a":1,"a":2}"#).1);
        assert!(compact(r#""\udfff""#).1);
        assert!(!compact(r#""\ud83d\ude00""#).1);
    }

    #[test]
    fn incomplete_and_syntax() {
        let mut c = Cursor::new(b"{\"a\": [1, 2", LIMITS);
        assert_eq!(c.value(&mut Vec::new(), &mut false, 0), Err(Fail::Incomplete));
        let mut c = Cursor::new(b"[1 2]", LIMITS);
        assert!(matches!(c.value(&mut Vec::new(), &mut false, 0), Err(Fail::Syntax(3, _))));
        let mut c = Cursor::new(b"[[[[1]]]]", Limits { depth: 3, digits: 10 });
        assert!(matches!(c.value(&mut Vec::new(), &mut false, 0), Err(Fail::Deep(_))));
        let mut c = Cursor::new(b"[12345678901,1]", Limits { depth: 3, digits: 10 });
        assert!(matches!(c.value(&mut Vec::new(), &mut false, 0), Err(Fail::Syntax(1, _))));
        let mut c = Cursor::new(b"[1234567890.1234567890,1]", Limits { depth: 3, digits: 10 });
        assert!(c.value(&mut Vec::new(), &mut false, 0).is_ok());
    }

    fn num(t: &str) -> NumTok {
        let text = format!("{t},");
        Cursor::new(text.as_bytes(), LIMITS).number().unwrap()
    }

    #[test]
    fn integers_are_exact() {
        assert_eq!(num("-9223372036854775808").int64(), Some(i64::MIN));
        assert_eq!(num("9223372036854775807").int64(), Some(i64::MAX));
        assert_eq!(num("9223372036854775808").int64(), None);
        assert_eq!(num("-9223372036854775809").int64(), None);
        assert_eq!(num("-18446744073709551615").int64(), None);
        assert_eq!(num("123456789012345678901234567890").int64(), None);
        assert_eq!(num("-0").int64(), Some(0));
        assert_eq!(num("1.5").int64(), None);
        assert_eq!(num("1e3").int64(), None);
    }

    #[test]
    fn strings_end_and_know_ascii_whatever_their_place_in_a_word() {
        for len in 0..20 {
            for odd in [None, Some("é"), Some("\\n"), Some("\\u00e9"), Some("\\té")] {
                for at in 0..=len {
                    let mut text = "abcdefghijklmnopqrstuvwxyz"[..len].to_string();
                    if let Some(o) = odd {
                        text.insert_str(at, o);
                    }
                    let doc = format!("\"{text}\",\"x\"");
                    let mut c = Cursor::new(doc.as_bytes(), LIMITS);
                    let s = c.string().unwrap();
                    assert_eq!((s.start, s.end, c.i), (1, 1 + text.len(), 2 + text.len()), "{doc}");
                    assert_eq!(s.ascii, text.is_ascii(), "{doc}");
                    assert_eq!(s.escaped, text.contains('\\'), "{doc}");
                    if odd.is_none() {
                        break;
                    }
                }
            }
        }
        assert_eq!(Cursor::new(b"\"abcdefghij", LIMITS).string().unwrap_err(), Fail::Incomplete);
        assert!(matches!(Cursor::new(b"\"abcdefg\x01\"", LIMITS).string(), Err(Fail::Syntax(8, _))));
    }

    #[test]
    fn digits_are_read_whatever_their_place_in_a_word() {
        let digits = "98765432109876543210123";
        for len in 1..=digits.len() {
            for tail in ["", ",", "]", "/", ":", ".5", "e7"] {
                let t = format!("{}{tail} ", &digits[..len]);
                let n = Cursor::new(t.as_bytes(), LIMITS).number().unwrap();
                let int = &digits[..len];
                assert_eq!(n.end, len + tail.len() * (tail.starts_with(['.', 'e']) as usize), "{t}");
                let all: String = format!("{int}{}", if tail == ".5" { "5" } else { "" });
                assert_eq!(n.mant, all.parse::<u64>().ok(), "{t}");
                assert_eq!(n.frac, (tail == ".5") as u32);
            }
        }
        assert_eq!(num("0.00000000000000000000001").mant, Some(1));
        assert_eq!(num("-18446744073709551615").mant, Some(u64::MAX));
        assert_eq!(num("18446744073709551616").mant, None);
        assert_eq!(num("1234567890.1234567890").mant, Some(12345678901234567890));
        assert_eq!(num("98765432109.876543210").mant, None);
        assert_eq!(num("123456789.1234567890").mant, Some(1234567891234567890));
        assert_eq!(num("10.5e3").mant, Some(105));
    }

    #[test]
    fn tokens_scale_as_the_text_does() {
        for t in [
            "1.5000",
            "1.5001",
            "-0.001",
            "9223372036854775.807",
            "12",
            "1e3",
            "0.10",
            "28.00926",
            "123456789012345678901.5",
            "18446744073709551615",
            "-18446744073709551615",
            "1844674407370955161.5",
            "-9223372036854775809",
            "0.000000000000000001",
        ] {
            let n = num(t);
            for scale in [0, 3, 18, 19, 20, 38] {
                assert_eq!(n.scaled(t.as_bytes(), scale), scaled(t.as_bytes(), n.kind, scale), "{t} {scale}");
            }
        }
        assert_eq!(num("1.5000").scaled(b"1.5000", 3), Some(1500));
        assert_eq!(num("-0.001").scaled(b"-0.001", 3), Some(-1));
    }

    #[test]
    fn scaled_is_exact() {
        assert_eq!(scaled(b"1.5000", Num::Frac, 3), Some(1500));
        assert_eq!(scaled(b"1.5001", Num::Frac, 3), None);
        assert_eq!(scaled(b"-0.001", Num::Frac, 3), Some(-1));
        assert_eq!(scaled(b"9223372036854775.807", Num::Frac, 3), Some(9223372036854775807));
        assert_eq!(scaled(b"9223372036854775.808", Num::Frac, 3), Some(9223372036854775808));
        assert_eq!(scaled(b"1774000000000000.000", Num::Frac, 3), Some(1774000000000000000));
        assert_eq!(scaled(b"28.00926", Num::Frac, 18), Some(28_009_260_000_000_000_000));
        assert_eq!(scaled(b"1.5", Num::Frac, 3), Some(1500));
        assert_eq!(scaled(b"-1.2340", Num::Frac, 3), Some(-1234));
        assert_eq!(scaled(b"1.2345", Num::Frac, 3), None);
        assert_eq!(scaled(b"12", Num::Int, 3), Some(12000));
        assert_eq!(scaled(b"1e3", Num::Exp, 3), None);
    }
}
