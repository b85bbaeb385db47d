//! Columns filled row by row, sparsely (a value is stored with its row; most promoted columns
//! are null in most rows), and turned into dense Arrow arrays once a piece is read.
//!
//! Every column can drop the rows from a given one on (`truncate`): an event found odd or cut
//! short half-way leaves nothing behind.

use std::sync::Arc;

use arrow_array::{make_array, Array, ArrayRef, Decimal128Array, Int64Array, ListArray, StringArray};
use arrow_buffer::{BooleanBufferBuilder, Buffer, NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow_data::ArrayData;
use arrow_schema::{DataType, Field};

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Kind {
    Int,
    Str,
    Float,
    StrList,
    IntList,
    Dims,
}

impl Kind {
    /// The Arrow type of a column of this kind (read/schema.py's ARROW_KIND).
    pub fn data_type(self) -> DataType {
        let item = |t: DataType| DataType::List(Arc::new(Field::new("item", t, true)));
        match self {
            Kind::Int => DataType::Int64,
            Kind::Str => DataType::Utf8,
            Kind::Float => DataType::Decimal128(38, 18),
            Kind::StrList => item(DataType::Utf8),
            Kind::IntList => item(DataType::Int64),
            Kind::Dims => item(item(DataType::Int64)),
        }
    }

    pub fn parse(name: &str) -> Option<Kind> {
        Some(match name {
            "int" => Kind::Int,
            "str" => Kind::Str,
            "float" => Kind::Float,
            "strlist" => Kind::StrList,
            "intlist" => Kind::IntList,
            "dims" => Kind::Dims,
            _ => return None,
        })
    }
}

/// The items in each buffer of a column (see `Col::room`).
pub type Room = [usize; 4];

/// One column. `rows` holds the row of each stored value, increasing.
pub enum Col {
    I64 {
        rows: Vec<u32>,
        vals: Vec<i64>,
    },
    Str {
        rows: Vec<u32>,
        ends: Vec<u32>,
        data: Vec<u8>,
    },
    Dec {
        rows: Vec<u32>,
        vals: Vec<i128>,
    },
    /// a list per row: `ends` into `items`, each item's text ending at `item_ends`
    StrList {
        rows: Vec<u32>,
        ends: Vec<u32>,
        item_ends: Vec<u32>,
        data: Vec<u8>,
    },
    IntList {
        rows: Vec<u32>,
        ends: Vec<u32>,
        items: Vec<i64>,
    },
    /// a list of lists per row: `ends` into `inner`, each inner list ending at its `inner` entry in `items`
    Dims {
        rows: Vec<u32>,
        ends: Vec<u32>,
        inner: Vec<u32>,
        items: Vec<i64>,
    },
}

impl Col {
    pub fn new(kind: Kind) -> Col {
        match kind {
            Kind::Int => Col::I64 { rows: vec![], vals: vec![] },
            Kind::Str => Col::Str { rows: vec![], ends: vec![], data: vec![] },
            Kind::Float => Col::Dec { rows: vec![], vals: vec![] },
            Kind::StrList => Col::StrList { rows: vec![], ends: vec![], item_ends: vec![], data: vec![] },
            Kind::IntList => Col::IntList { rows: vec![], ends: vec![], items: vec![] },
            Kind::Dims => Col::Dims { rows: vec![], ends: vec![], inner: vec![], items: vec![] },
        }
    }

    /// A column with room for `room` items (and a sixteenth more) in each of its buffers.
    pub fn with_room(kind: Kind, room: Room) -> Col {
        let mut col = Col::new(kind);
        let [a, b, c, d] = room.map(|n| n + n / 16);
        match &mut col {
            Col::I64 { rows, vals } => {
                rows.reserve_exact(a);
                vals.reserve_exact(b);
            }
            Col::Dec { rows, vals } => {
                rows.reserve_exact(a);
                vals.reserve_exact(b);
            }
            Col::Str { rows, ends, data } => {
                rows.reserve_exact(a);
                ends.reserve_exact(b);
                data.reserve_exact(c);
            }
            Col::StrList { rows, ends, item_ends, data } => {
                rows.reserve_exact(a);
                ends.reserve_exact(b);
                item_ends.reserve_exact(c);
                data.reserve_exact(d);
            }
            Col::IntList { rows, ends, items } => {
                rows.reserve_exact(a);
                ends.reserve_exact(b);
                items.reserve_exact(c);
            }
            Col::Dims { rows, ends, inner, items } => {
                rows.reserve_exact(a);
                ends.reserve_exact(b);
                inner.reserve_exact(c);
                items.reserve_exact(d);
            }
        }
        col
    }

    /// The items each of its buffers holds, in the order `with_room` takes them.
    pub fn room(&self) -> Room {
        match self {
            Col::I64 { rows, vals } => [rows.len(), vals.len(), 0, 0],
            Col::Dec { rows, vals } => [rows.len(), vals.len(), 0, 0],
            Col::Str { rows, ends, data } => [rows.len(), ends.len(), data.len(), 0],
            Col::StrList { rows, ends, item_ends, data } => [rows.len(), ends.len(), item_ends.len(), data.len()],
            Col::IntList { rows, ends, items } => [rows.len(), ends.len(), items.len(), 0],
            Col::Dims { rows, ends, inner, items } => [rows.len(), ends.len(), inner.len(), items.len()],
        }
    }

    pub fn kind(&self) -> Kind {
        match self {
            Col::I64 { .. } => Kind::Int,
            Col::Dec { .. } => Kind::Float,
            Col::Str { .. } => Kind::Str,
            Col::StrList { .. } => Kind::StrList,
            Col::IntList { .. } => Kind::IntList,
            Col::Dims { .. } => Kind::Dims,
        }
    }

    fn rows(&self) -> &Vec<u32> {
        match self {
            Col::I64 { rows, .. }
            | Col::Str { rows, .. }
            | Col::Dec { rows, .. }
            | Col::StrList { rows, .. }
            | Col::IntList { rows, .. }
            | Col::Dims { rows, .. } => rows,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.rows().is_empty()
    }

    #[inline]
    pub fn push_i64(&mut self, row: u32, v: i64) {
        if let Col::I64 { rows, vals } = self {
            rows.push(row);
            vals.push(v);
        }
    }

    #[inline]
    pub fn push_dec(&mut self, row: u32, v: i128) {
        if let Col::Dec { rows, vals } = self {
            rows.push(row);
            vals.push(v);
        }
    }

    /// The string buffer of a Str column, to append one value's text to; then `end_str`.
    #[inline]
    pub fn str_data(&mut self) -> &mut Vec<u8> {
        match self {
            Col::Str { data, .. } => data,
            _ => unreachable!("not a string column"),
        }
    }

    #[inline]
    pub fn end_str(&mut self, row: u32) {
        if let Col::Str { rows, ends, data } = self {
            rows.push(row);
            ends.push(data.len() as u32);
        }
    }

    /// Remove every value of row `row` and later.
    pub fn truncate(&mut self, row: u32) {
        let keep = self.rows().partition_point(|&r| r < row);
        match self {
            Col::I64 { rows, vals } => {
                rows.truncate(keep);
                vals.truncate(keep);
            }
            Col::Dec { rows, vals } => {
                rows.truncate(keep);
                vals.truncate(keep);
            }
            Col::Str { rows, ends, data } => {
                rows.truncate(keep);
                ends.truncate(keep);
                data.truncate(ends.last().copied().unwrap_or(0) as usize);
            }
            Col::StrList { rows, ends, item_ends, data } => {
                rows.truncate(keep);
                ends.truncate(keep);
                item_ends.truncate(ends.last().copied().unwrap_or(0) as usize);
                data.truncate(item_ends.last().copied().unwrap_or(0) as usize);
            }
            Col::IntList { rows, ends, items } => {
                rows.truncate(keep);
                ends.truncate(keep);
                items.truncate(ends.last().copied().unwrap_or(0) as usize);
            }
            Col::Dims { rows, ends, inner, items } => {
                rows.truncate(keep);
                ends.truncate(keep);
                inner.truncate(ends.last().copied().unwrap_or(0) as usize);
                items.truncate(inner.last().copied().unwrap_or(0) as usize);
            }
        }
    }

    /// The dense Arrow array of `n` rows, or None when every row is null.
    pub fn finish(self, n: usize) -> Option<ArrayRef> {
        if self.is_empty() {
            return None;
        }
        Some(match self {
            Col::I64 { rows, vals } => {
                let nulls = validity(&rows, n);
                Arc::new(Int64Array::new(ScalarBuffer::from(spread(&rows, vals, n, 0i64)), nulls))
            }
            Col::Dec { rows, vals } => {
                let nulls = validity(&rows, n);
                let arr = Decimal128Array::new(ScalarBuffer::from(spread(&rows, vals, n, 0i128)), nulls);
                Arc::new(arr.with_precision_and_scale(38, 18).expect("38, 18 is a valid decimal type"))
            }
            Col::Str { rows, ends, data } => Arc::new(strings(&rows, &ends, data, n)),
            Col::StrList { rows, ends, item_ends, data } => {
                let k = item_ends.len();
                let items = strings(&(0..k as u32).collect::<Vec<_>>(), &item_ends, data, k);
                Arc::new(list(&rows, &ends, n, Arc::new(items), DataType::Utf8))
            }
            Col::IntList { rows, ends, items } => {
                let items = Int64Array::new(ScalarBuffer::from(items), None);
                Arc::new(list(&rows, &ends, n, Arc::new(items), DataType::Int64))
            }
            Col::Dims { rows, ends, inner, items } => {
                let k = inner.len();
                let items = Int64Array::new(ScalarBuffer::from(items), None);
                let inner = list(&(0..k as u32).collect::<Vec<_>>(), &inner, k, Arc::new(items), DataType::Int64);
                let inner_type = inner.data_type().clone();
                Arc::new(list(&rows, &ends, n, Arc::new(inner), inner_type))
            }
        })
    }
}

/// Zeros enough for every buffer of an all-null column of `n` rows (`nulls`).
pub fn zeros(n: usize) -> Buffer {
    Buffer::from_vec(vec![0u8; 16 * (n + 1)])
}

/// An all-null column of `kind` and `n` rows whose buffers are all slices of `zeros` (from
/// `zeros(n)` or longer): the columns no event of a piece fills cost one buffer between them.
pub fn nulls(kind: Kind, n: usize, zeros: &Buffer) -> ArrayRef {
    assert!(zeros.len() >= 16 * (n + 1), "zeros for {n} rows");
    let part = |len: usize| zeros.slice_with_length(0, len);
    let dt = kind.data_type();
    let validity = part(n.div_ceil(8));
    let builder = ArrayData::builder(dt.clone()).len(n).null_count(n).null_bit_buffer(Some(validity));
    let builder = match &dt {
        DataType::Int64 => builder.add_buffer(part(8 * n)),
        DataType::Decimal128(..) => builder.add_buffer(part(16 * n)),
        DataType::Utf8 => builder.add_buffer(part(4 * (n + 1))).add_buffer(part(0)),
        DataType::List(f) => {
            let child = match f.data_type() {
                DataType::Int64 => nulls(Kind::Int, 0, zeros),
                DataType::Utf8 => nulls(Kind::Str, 0, zeros),
                _ => nulls(Kind::IntList, 0, zeros),
            };
            builder.add_buffer(part(4 * (n + 1))).add_child_data(child.to_data())
        }
        _ => unreachable!("a column kind's type"),
    };
    // SAFETY: zeros are a valid all-null array of each of these types: a validity bitmap of no
    // valid row, values or offsets all 0 (no string or list has an item), an empty child; the
    // buffers are at least as long as the types need for `n` rows (`zeros`). The checks of
    // `build` cost a pass over every offset of every such column of every piece.
    make_array(unsafe { builder.build_unchecked() })
}

/// The values of `rows` spread over `n` rows, `zero` elsewhere (a column with a value in every
/// row is taken as it is).
fn spread<T: Copy>(rows: &[u32], vals: Vec<T>, n: usize, zero: T) -> Vec<T> {
    if rows.len() == n {
        return vals;
    }
    let mut out = vec![zero; n];
    for (&r, &v) in rows.iter().zip(&vals) {
        out[r as usize] = v;
    }
    out
}

fn validity(rows: &[u32], n: usize) -> Option<NullBuffer> {
    if rows.len() == n {
        return None;
    }
    let mut valid = BooleanBufferBuilder::new(n);
    valid.append_n(n, false);
    for &r in rows {
        valid.set_bit(r as usize, true);
    }
    Some(NullBuffer::new(valid.finish()))
}

/// Dense i32 offsets for `n` rows from the end offsets of the rows that have a value.
fn offsets(rows: &[u32], ends: &[u32], n: usize) -> OffsetBuffer<i32> {
    let mut out = Vec::with_capacity(n + 1);
    out.push(0i32);
    let mut last = 0i32;
    if rows.len() == n {
        out.extend(ends.iter().map(|&e| e as i32));
    } else {
        // a row without a value ends where the one before it does
        for (&r, &e) in rows.iter().zip(ends) {
            out.resize(r as usize + 1, last);
            last = e as i32;
            out.push(last);
        }
        out.resize(n + 1, last);
    }
    OffsetBuffer::new(ScalarBuffer::from(out))
}

fn strings(rows: &[u32], ends: &[u32], data: Vec<u8>, n: usize) -> StringArray {
    let offs = offsets(rows, ends, n);
    // every value was checked to be UTF-8 (or decoded from escapes into UTF-8) as it was read
    StringArray::new(offs, Buffer::from_vec(data), validity(rows, n))
}

fn list(rows: &[u32], ends: &[u32], n: usize, values: ArrayRef, item: DataType) -> ListArray {
    let field = Arc::new(Field::new("item", item, true));
    ListArray::new(field, offsets(rows, ends, n), values, validity(rows, n))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn offs(rows: &[u32], ends: &[u32], n: usize) -> Vec<i32> {
        offsets(rows, ends, n).iter().copied().collect()
    }

    #[test]
    fn offsets_carry_the_last_end_over_rows_without_a_value() {
        assert_eq!(offs(&[0, 1, 2], &[3, 3, 7], 3), [0, 3, 3, 7]);
        assert_eq!(offs(&[1, 3], &[2, 5], 6), [0, 0, 2, 2, 5, 5, 5]);
        assert_eq!(offs(&[0], &[4], 3), [0, 4, 4, 4]);
        assert_eq!(offs(&[2], &[1], 3), [0, 0, 0, 1]);
        assert_eq!(offs(&[], &[], 2), [0, 0, 0]);
    }

    #[test]
    fn room_is_what_a_column_holds_and_a_new_one_reserves_it() {
        let mut c = Col::new(Kind::Str);
        c.str_data().extend_from_slice(b"abc");
        c.end_str(0);
        c.str_data().extend_from_slice(b"de");
        c.end_str(2);
        assert_eq!(c.room(), [2, 2, 5, 0]);
        let Col::Str { rows, ends, data } = Col::with_room(Kind::Str, [32, 32, 1600, 0]) else {
            panic!("a string column")
        };
        assert!(rows.is_empty() && rows.capacity() >= 34 && ends.capacity() >= 34 && data.capacity() >= 1700);
        let mut d = Col::new(Kind::Dims);
        if let Col::Dims { rows, ends, inner, items } = &mut d {
            items.extend([1, 2, 3]);
            inner.extend([2, 3]);
            ends.push(2);
            rows.push(0);
        }
        assert_eq!(d.room(), [1, 1, 2, 3]);
    }

    #[test]
    fn an_unfilled_column_is_all_null_of_its_kind_and_shares_one_buffer() {
        let n = 5;
        let z = zeros(n);
        for kind in [Kind::Int, Kind::Str, Kind::Float, Kind::StrList, Kind::IntList, Kind::Dims] {
            let a = nulls(kind, n, &z);
            assert_eq!((a.len(), a.null_count(), a.data_type()), (n, n, &kind.data_type()));
            a.to_data().validate_full().expect("a valid array");
            let d = a.to_data();
            assert!(d.buffers().iter().all(|b| b.as_ptr() == z.as_ptr()), "{kind:?} has a buffer of its own");
        }
        // a column with a value keeps it
        let mut c = Col::new(Kind::Int);
        c.push_i64(1, 7);
        let a = c.finish(3).expect("a column with a value");
        assert_eq!((a.null_count(), a.as_any().downcast_ref::<Int64Array>().unwrap().value(1)), (2, 7));
    }
}
